package runner

import (
	"slices"
	"testing"
)

func TestPlainArgv(t *testing.T) {
	cases := []struct {
		cmd  string
		want []string // nil: not plain
	}{
		{"msb exec -t -u dev -w /workspace vm-1 -- 'opencode' ", []string{"msb", "exec", "-t", "-u", "dev", "-w", "/workspace", "vm-1", "--", "opencode"}},
		{`msb exec vm -- "a b" 'c d'`, []string{"msb", "exec", "vm", "--", "a b", "c d"}},
		{"exit 3", nil},
		{"echo hi", nil},
		{"cd /tmp", nil},
		{"a | b", nil},
		{"a > f", nil},
		{"a; b", nil},
		{"X=1 a", nil},
		{"a $HOME", nil},
		{`a "$HOME"`, nil},
		{"a ~/x", nil},
		{"a *.go", nil},
		{`a \x`, []string{"a", "x"}}, // as the shell reads it
		// go-task's quoting of an argument with a quote in it (q, CLI_ARGS)
		{`msb exec vm -- sh -c 'it'\''s "$HOME"'`, []string{"msb", "exec", "vm", "--", "sh", "-c", `it's "$HOME"`}},
		{`a\*b 'x y'`, []string{"a*b", "x y"}},
		{"a {b,c}", nil},
		{"a b~", nil},
		{`a $'\n'`, nil},
		{`a \`, nil},
		{"! a", nil},
		{"a &", nil},
		{"a $(b)", nil},
		{"", nil},
	}
	for _, c := range cases {
		got, ok := plainArgv(c.cmd)
		if ok != (c.want != nil) || !slices.Equal(got, c.want) {
			t.Errorf("plainArgv(%q) = %q, %v; want %q", c.cmd, got, ok, c.want)
		}
	}
}

func TestGlobRoot(t *testing.T) {
	for glob, want := range map[string]string{
		"toolchain/**/*": "/o/toolchain", "sandbox.yaml": "/o/sandbox.yaml", "!x/*.tmp": "/o/x",
		"/abs/dir/*.go": "/abs/dir", "src/{a,b}/x": "/o/src", "*": "/o",
	} {
		if got := GlobRoot("/o", glob); got != want {
			t.Errorf("GlobRoot(%q) = %q, want %q", glob, got, want)
		}
	}
}
