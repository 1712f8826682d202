package imagecmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/testkit/fakes"
	"github.com/agents-sandbox/asb/templates"
)

// TestMain lets the test binary be the stand-in docker and podman.
func TestMain(m *testing.M) {
	fakes.Dispatch()
	os.Exit(m.Run())
}

// newFolder is a fresh `asb init --agent opencode` folder (base
// debian:trixie-slim) with the stand-in builders and a stand-in mmdebstrap
// on PATH, on a host with no registry.
func newFolder(t *testing.T) (*Options, *bytes.Buffer, string) {
	t.Helper()
	tmp := t.TempDir()
	plan, err := generator.Render(templates.FS, generator.DefaultOptions("opencode", "x"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "x")
	if _, err := generator.Apply(context.Background(), dir, plan, generator.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin, state := filepath.Join(tmp, "bin"), filepath.Join(tmp, "state")
	if err := fakes.Link(self, bin); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "mmdebstrap"), []byte("#!/bin/sh\necho FAKE-ROOTFS\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv(fakes.StateEnv, state)
	t.Setenv(fakes.NoRegistryEnv, "1")
	var errOut bytes.Buffer
	f := &cmdutil.Factory{
		IO:        &cmdutil.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &errOut},
		Templates: templates.FS,
		Getwd:     func() (string, error) { return dir, nil },
		Getenv:    func(string) string { return "" },
		Now:       time.Now,
	}
	return &Options{Factory: f}, &errOut, state
}

// The first image:build on a machine with no registry: one line says the
// base cannot be pulled, the local Debian base is built and the toolchain
// built on it; the builder's raw pull error is not shown.
func TestBuildFallsBackToLocalBase(t *testing.T) {
	o, errOut, state := newFolder(t)
	argv := []string{"podman", "build", "--tag", "x:latest", "toolchain"}
	if err := runBuild(context.Background(), o, argv); err != nil {
		t.Fatalf("image build: %v\n%s", err, errOut)
	}
	got := errOut.String()
	if strings.Contains(got, "pinging container registry") {
		t.Errorf("the builder's raw pull error reached the user:\n%s", got)
	}
	for _, want := range []string{
		"asb: the base image debian:trixie-slim cannot be pulled (no registry reachable from here)\n",
		"building the base image localhost/debian:trixie-slim from Debian's trixie packages",
		"asb: building on localhost/debian:trixie-slim",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("stderr lacks %q:\n%s", want, got)
		}
	}
	calls, err := fakes.Calls(state)
	if err != nil {
		t.Fatal(err)
	}
	var last fakes.Call
	for _, c := range calls {
		if len(c) > 1 && c[1] == "build" {
			last = c
		}
	}
	if !strings.Contains(last.String(), "podman build --build-arg BASE_IMAGE=localhost/debian:trixie-slim --tag x:latest toolchain") {
		t.Errorf("the second build was %q", last)
	}

	// Again (toolchain edited): the local base is there, no second mmdebstrap.
	errOut.Reset()
	if err := runBuild(context.Background(), o, argv); err != nil {
		t.Fatalf("second image build: %v\n%s", err, errOut)
	}
	if strings.Contains(errOut.String(), "building the base image") {
		t.Errorf("the local base was built again:\n%s", errOut)
	}
}

// A failure that is not the base's is the builder's own, shown as it is.
func TestBuildOtherFailureIsTheBuilders(t *testing.T) {
	o, errOut, _ := newFolder(t)
	t.Setenv(fakes.NoRegistryEnv, "")
	err := runBuild(context.Background(), o, []string{"podman", "build", "--tag", "x:latest", "no-such-context"})
	if err == nil {
		t.Fatal("a failed build passed")
	}
	if !strings.Contains(errOut.String(), "podman build: no Dockerfile in no-such-context") || strings.Contains(errOut.String(), "cannot be pulled") {
		t.Errorf("stderr:\n%s", errOut)
	}
}

func TestLocalFor(t *testing.T) {
	for ref, want := range map[string]string{
		"debian:trixie-slim":                   "localhost/debian:trixie-slim",
		"docker.io/library/debian:bookworm":    "localhost/debian:bookworm",
		"library/debian:trixie":                "localhost/debian:trixie",
		"node:22":                              "",
		"localhost/debian:trixie-slim":         "",
		"ghcr.io/acme/debian:trixie":           "",
		"debian:trixie-slim@sha256:0123456789": "",
	} {
		if got := LocalFor(ref); got != want {
			t.Errorf("LocalFor(%q) = %q, want %q", ref, got, want)
		}
	}
}
