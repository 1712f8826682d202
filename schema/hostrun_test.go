package schema

import (
	"strings"
	"testing"
)

func TestHostRunTable(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range BaseHostRun {
		if !ValidRelPath(strings.TrimSuffix(e.Path, "/")) || e.Why == "" || seen[e.Path] {
			t.Errorf("entry %+v: a relative path of plain names (a folder ends in /), a reason, once", e)
		}
		seen[e.Path] = true
	}
	table := HostRunTable(BaseHostRun)
	for _, c := range []struct {
		path     string
		anywhere bool
		want     string
	}{
		{".envrc", false, ".envrc"},
		{"sub/.envrc", false, ""},
		{"sub/.envrc", true, ".envrc"},
		{".vscode/tasks.json", false, ".vscode/"},
		{"pkg/.vscode/settings.json", true, ".vscode/"},
		{".github/workflows/ci.yml", false, ".github/workflows/"},
		{".github/CODEOWNERS", true, ""},
		{"packages/a/package.json", true, "package.json"},
		{"not-package.json", true, ""},
		{"src/main.go", true, ""},
	} {
		e, ok := table.Match(c.path, c.anywhere)
		if got := map[bool]string{true: e.Path}[ok]; got != c.want {
			t.Errorf("Match(%q, %v) = %q, want %q", c.path, c.anywhere, got, c.want)
		}
	}
}
