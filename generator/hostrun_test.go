package generator

import (
	"strings"
	"testing"

	"github.com/agents-sandbox/asb/schema"
	"github.com/agents-sandbox/asb/templates"
)

// Each preset owns its part of the table of files host tools run or obey:
// its manifest lists them (host_run), each a plain relative path with a
// reason, and the table holds every preset's besides the base part.
func TestHostRunTableHasEveryPreset(t *testing.T) {
	names, err := Agents(templates.FS)
	if err != nil {
		t.Fatal(err)
	}
	table, err := HostRunTable(templates.FS)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		a, err := LoadAgent(templates.FS, name)
		if err != nil {
			t.Fatal(err)
		}
		if len(a.HostRun) == 0 {
			t.Errorf("preset %s lists no host_run: what of a project does %s on the host run or obey?", name, name)
		}
		for _, e := range a.HostRun {
			if !schema.ValidRelPath(strings.TrimSuffix(e.Path, "/")) {
				t.Errorf("preset %s: host_run path %q is not a plain relative path", name, e.Path)
			}
			if _, ok := table.Match(strings.TrimSuffix(e.Path, "/")+map[bool]string{true: "/x"}[strings.HasSuffix(e.Path, "/")], false); !ok {
				t.Errorf("preset %s: %q is not in the table", name, e.Path)
			}
		}
	}
	for _, want := range []string{".mcp.json", ".claude/settings.json", ".envrc", "package.json"} {
		if _, ok := table.Match(want, false); !ok {
			t.Errorf("the table does not hold %s", want)
		}
	}
}
