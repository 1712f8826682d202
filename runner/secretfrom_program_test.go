package runner

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMissingProgram: each program a command names by a plain word must be
// a builtin, a function it defines, or an executable file (on PATH, or at
// its path from the folder, ~ being HOME); the command is never run.
func TestMissingProgram(t *testing.T) {
	dir, bin, home := t.TempDir(), t.TempDir(), t.TempDir()
	for p, mode := range map[string]os.FileMode{
		filepath.Join(bin, "gh"): 0o755, filepath.Join(bin, "notexec"): 0o644,
		filepath.Join(dir, "tok.sh"): 0o755, filepath.Join(home, "tok"): 0o700,
	} {
		// A command that ran would leave this file behind.
		if err := os.WriteFile(p, []byte("#!/bin/sh\ntouch "+filepath.Join(dir, "ran")+"\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(bin, "adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"PATH": bin + string(os.PathListSeparator), "HOME": home}
	getenv := func(k string) string { return env[k] }
	for cmd, want := range map[string]string{
		"gh auth token":                  "",
		"X=1 gh auth token | tr -d x":    `program "tr" is not found on PATH`,
		"gh auth token | cat":            `program "cat" is not found on PATH`,
		"./tok.sh":                       "",
		"~/tok --quiet":                  "",
		"printf %s \"$X\"":               "",
		"f() { gh auth token; }; f":      "",
		"$TOOL read x":                   "",
		"notexec":                        `program "notexec" is not found on PATH`,
		"adir":                           `program "adir" is not found on PATH`,
		"/nonexistent/op read op://a/b":  `program "/nonexistent/op" is not an executable file`,
		"missing && gh auth token":       `program "missing" is not found on PATH`,
		"gh auth token; echo $(missing)": `program "missing" is not found on PATH`,
		"gh 'unclosed":                   "sh cannot read it",
	} {
		got := MissingProgram(cmd, dir, getenv)
		if (want == "") != (got == "") || (want != "" && !startsWith(got, want)) {
			t.Errorf("MissingProgram(%q) = %q, want %q", cmd, got, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Fatal("a command ran")
	}
}

func startsWith(s, prefix string) bool { return len(s) >= len(prefix) && s[:len(prefix)] == prefix }
