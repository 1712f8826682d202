package generator

import (
	"io/fs"
	"reflect"
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

// TestOwnHostRunTableFromThePresets: for asb's own tree the table is made
// once per process: a call after the first allocates only its copy, where
// reading the manifests again took thousands; it is the table of the
// presets as LoadAgent and schema.DefaultAgents check them whole, and the
// one another tree's way gives for the same files; a caller's change to its
// copy reaches no other.
func TestOwnHostRunTableFromThePresets(t *testing.T) {
	own, err := HostRunTable(templates.FS)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := fs.Sub(templates.FS, ".") // the same files, not asb's own tree
	if err != nil {
		t.Fatal(err)
	}
	read, err := HostRunTable(sub)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(own, read) || len(own) <= len(schema.BaseHostRun) {
		t.Errorf("asb's own table\n%v\nthe manifests read one by one\n%v", own, read)
	}
	var each [][]schema.HostRun
	for _, a := range schema.DefaultAgents() {
		each = append(each, a.HostRun)
	}
	if want := schema.NewHostRunTable(each...); !reflect.DeepEqual(own, want) {
		t.Errorf("asb's own table is not the presets':\n%v\n%v", own, want)
	}
	if n := testing.AllocsPerRun(20, func() { _, _ = HostRunTable(templates.FS) }); n > 1 {
		t.Errorf("HostRunTable of asb's own tree allocates %v times a call, want its one copy", n)
	}
	own[0].Path = "changed"
	if again, _ := HostRunTable(templates.FS); again[0].Path == "changed" {
		t.Error("a caller's change reached the next caller")
	}
}
