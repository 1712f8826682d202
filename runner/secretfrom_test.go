package runner

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSecretCommandStore(t *testing.T) {
	state := t.TempDir()
	getenv := func(k string) string {
		if k == "XDG_STATE_HOME" {
			return state
		}
		return ""
	}
	s, err := SecretCommandStore(getenv)
	if err != nil {
		t.Fatal(err)
	}
	a, b := t.TempDir(), t.TempDir()
	if err := s.Set(a, "GITHUB_TOKEN", "gh auth token"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Load(a); got["GITHUB_TOKEN"] != "gh auth token" {
		t.Errorf("Load(a) = %v", got)
	}
	if got, _ := s.Load(b); len(got) != 0 {
		t.Errorf("another folder sees a's commands: %v", got)
	}
	if !strings.HasPrefix(s.File(a), filepath.Join(state, "asb", "secret-commands")+string(os.PathSeparator)) {
		t.Errorf("the store is at %s, want under $XDG_STATE_HOME/asb/secret-commands", s.File(a))
	}
	fi, err := os.Stat(s.File(a))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("store file mode = %v, %v; want 0600", fi, err)
	}
	if err := s.Set(a, "GITHUB_TOKEN", ""); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Load(a); len(got) != 0 {
		t.Errorf("after removing: %v", got)
	}
	if _, err := SecretCommandStore(func(string) string { return "" }); err == nil {
		t.Errorf("no HOME and no XDG_STATE_HOME: want an error")
	}
}

func TestRunSecretCommand(t *testing.T) {
	ctx, dir := context.Background(), t.TempDir()
	var stderr bytes.Buffer
	v, err := RunSecretCommand(ctx, dir, "T", `printf 'val\n\n'; echo note >&2`, os.Environ(), &stderr)
	if err != nil || v != "val" || stderr.String() != "note\n" {
		t.Errorf("= %q, %v, stderr %q; want val, nil, note", v, err, stderr.String())
	}
	stderr.Reset()
	_, err = RunSecretCommand(ctx, dir, "T", `printf 'half-%s\n' "$(echo 1 | tr 1 2)"; echo expired >&2; exit 4`, os.Environ(), &stderr)
	var ce *CommandError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "exit status 4") || strings.Contains(err.Error(), "half-2") {
		t.Errorf("failing command: %v", err)
	}
	if stderr.String() != "expired\n" {
		t.Errorf("stderr = %q, want the command's", stderr.String())
	}
	if _, err = RunSecretCommand(ctx, dir, "T", `true`, os.Environ(), &stderr); err == nil || !strings.Contains(err.Error(), "printed no value") {
		t.Errorf("empty output: %v", err)
	}
}
