package runner

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEngineSpecRoundTrip(t *testing.T) {
	in := EngineSpec{Dir: "/o", Tasks: []string{"agent"}, Args: []string{"--model", "a b"}, Vars: map[string]string{"VM": "x-1-opencode"}, Yes: true}
	argv, err := EncodeSpec(in)
	if err != nil {
		t.Fatal(err)
	}
	if argv[0] != EngineName {
		t.Errorf("argv[0] = %q", argv[0])
	}
	out, err := DecodeSpec(argv[1:])
	if err != nil {
		t.Fatal(err)
	}
	in.Protocol = EngineProtocol
	if d := cmp.Diff(in, out); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	if _, err := DecodeSpec(nil); err == nil || !strings.Contains(err.Error(), "run `asb task` instead") {
		t.Errorf("asb-task without a spec: %v", err)
	}
	old := strings.Replace(argv[2], `"protocol":1`, `"protocol":0`, 1)
	if _, err := DecodeSpec([]string{"--spec", old}); err == nil || !strings.Contains(err.Error(), "install both from one build") {
		t.Errorf("a spec of another protocol: %v", err)
	}
}

func TestFindEngine(t *testing.T) {
	dir := t.TempDir()
	asb := filepath.Join(dir, "asb")
	eng := filepath.Join(dir, EngineName)
	for _, p := range []string{asb, eng} {
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// asb reached through a symlink still finds the engine beside its real path.
	link := filepath.Join(t.TempDir(), "asb")
	if err := os.Symlink(asb, link); err != nil {
		t.Fatal(err)
	}
	noEnv := func(string) string { return "" }
	self := func() (string, error) { return link, nil }
	if got, err := FindEngine(noEnv, self); err != nil || got != eng {
		t.Errorf("FindEngine beside asb = %q, %v; want %q", got, err, eng)
	}
	env := func(k string) string {
		if k == EngineEnv {
			return "/elsewhere/asb-task"
		}
		return ""
	}
	if got, _ := FindEngine(env, self); got != "/elsewhere/asb-task" {
		t.Errorf("$%s is not honoured: %q", EngineEnv, got)
	}
	t.Setenv("PATH", t.TempDir())
	lone := func() (string, error) { return filepath.Join(t.TempDir(), "asb"), nil }
	if _, err := FindEngine(noEnv, lone); err == nil || !strings.Contains(err.Error(), "make install") {
		t.Errorf("no engine anywhere: %v", err)
	}
	if _, err := FindEngine(noEnv, func() (string, error) { return "", errors.New("no exe") }); err == nil {
		t.Error("no engine and no executable path: no error")
	}
}
