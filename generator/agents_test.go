package generator

import (
	"errors"
	"reflect"
	"testing"
	"testing/fstest"

	"github.com/agents-sandbox/asb/templates"
)

func TestLoadAgentOwnTreeReadOnceCopied(t *testing.T) {
	a, err := LoadAgent(templates.FS, "opencode")
	if err != nil {
		t.Fatal(err)
	}
	want := a.Clone()
	a.Hosts[0], a.Command[0], a.Name = "changed.example.com", "changed", "changed"
	b, err := LoadAgent(templates.FS, "opencode")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(b, want) {
		t.Errorf("a caller's change reached the next caller:\n%+v\nwant\n%+v", b, want)
	}
	var unknown *UnknownAgentError
	for range 2 { // the cached answer too
		if _, err := LoadAgent(templates.FS, "nope"); !errors.As(err, &unknown) {
			t.Errorf("an unknown preset: %v", err)
		}
	}
}

// Another tree is read at each call: a test's tree may change.
func TestLoadAgentOtherTreeReadEachTime(t *testing.T) {
	raw, err := templates.FS.ReadFile("agents/opencode/agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tree := fstest.MapFS{"agents/opencode/agent.yaml": {Data: raw}}
	if _, err := LoadAgent(tree, "opencode"); err != nil {
		t.Fatal(err)
	}
	tree["agents/opencode/agent.yaml"] = &fstest.MapFile{Data: []byte("name: [broken\n")}
	if _, err := LoadAgent(tree, "opencode"); err == nil {
		t.Error("the changed tree was not read again")
	}
}
