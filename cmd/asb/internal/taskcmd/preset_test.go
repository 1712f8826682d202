package taskcmd_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/schema"
	"github.com/agents-sandbox/asb/templates"
)

// withPresets is asb's template tree plus the presets of dir (an overlay:
// nothing of the binary's own tree changes).
func withPresets(t *testing.T, dir string) fs.FS {
	t.Helper()
	tree := fstest.MapFS{}
	for _, src := range []fs.FS{templates.FS, os.DirFS(dir)} {
		err := fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := fs.ReadFile(src, p)
			tree[p] = &fstest.MapFile{Data: data, Mode: 0o644}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return tree
}

// TestPresetFromTestdata: a preset that is only data — a folder under
// testdata, not in the binary — renders, validates, and runs the task chain
// with the stand-ins. Adding an agent needs no Go code.
func TestPresetFromTestdata(t *testing.T) {
	tree := withPresets(t, "testdata")
	agents, err := generator.Agents(tree)
	if err != nil || !slices.Contains(agents, "toy") {
		t.Fatalf("presets %v (%v): the testdata preset is not seen", agents, err)
	}
	toy, err := generator.LoadAgent(tree, "toy")
	if err != nil {
		t.Fatal(err)
	}
	s := newSandboxFrom(t, tree, generator.DefaultOptions("toy", "demo"))
	s.approve() // a preset asb does not ship renders nothing asb trusts by itself
	t.Setenv("TOY_API_KEY", "canary-toy-key-0c4e")
	probs := schema.CheckDir(s.dir, schema.CheckOptions{Getenv: os.Getenv, Agents: []schema.Agent{toy}})
	for _, p := range probs {
		if p.Severity == schema.SeverityError {
			t.Errorf("validate: %s", p)
		}
	}
	for _, want := range []string{"toy/settings.json", "toolchain/Dockerfile"} {
		if _, err := os.Stat(filepath.Join(s.dir, want)); err != nil {
			t.Errorf("%s: %v", want, err)
		}
	}
	dockerfile, _ := os.ReadFile(filepath.Join(s.dir, "toolchain", "Dockerfile"))
	for _, want := range []string{"npm install -g @example/toy-agent@${AGENT_VERSION}", "ARG AGENT_VERSION=3.1.4", `TOY_NO_UPDATE="1"`, "&& toy-agent --version"} {
		if !strings.Contains(string(dockerfile), want) {
			t.Errorf("the Dockerfile lacks %q", want)
		}
	}
	mustRun(t, s, "task", "agent", "--", "hello")
	execs := find(s.calls(), "msb", "exec")
	if len(execs) == 0 || !strings.HasSuffix(execs[len(execs)-1].String(), "-- toy-agent --no-ask hello") {
		t.Errorf("the agent task ran %q, want msb exec … -- toy-agent --no-ask hello", execs)
	}
	sandbox, _ := os.ReadFile(filepath.Join(s.dir, "sandbox.yaml"))
	for _, want := range []string{`"api.toy.example"`, "/home/dev/.config/toy"} {
		if !strings.Contains(string(sandbox), want) {
			t.Errorf("sandbox.yaml lacks %s", want)
		}
	}
}
