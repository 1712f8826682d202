package initcmd

import (
	"strings"
	"testing"

	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/schema"
)

func TestGuardHostFile(t *testing.T) {
	hc := &schema.HostConfig{EnvRef: "{env:NAME}", EnvRefFiles: []string{"opencode.json"}}
	clean := outer.HostFile{Rel: "opencode.json", Content: []byte(`{"model": "anthropic/claude-sonnet-4-5"}`)}
	if got, notes, ok := guardHostFile(hc, clean, map[string]bool{}); !ok || len(notes) > 0 || string(got) != string(clean.Content) {
		t.Errorf("a file without credentials: %q, %v, %v; want it as it is", got, notes, ok)
	}

	// Two credentials that would get one name get two; a name already
	// taken (the preset's key) is not reused.
	used := map[string]bool{"A_API_KEY": true}
	two := outer.HostFile{Rel: "opencode.json", Content: []byte(`{"provider": {"a": {"options": {"apiKey": "canary-1-xxxxxxxx", "api_key": "canary-2-xxxxxxxx"}}}}`)}
	got, notes, ok := guardHostFile(hc, two, used)
	if !ok || strings.Contains(string(got), "canary") {
		t.Fatalf("got %s, %v", got, ok)
	}
	want := `{"provider": {"a": {"options": {"apiKey": "{env:A_API_KEY_2}", "api_key": "{env:A_API_KEY_3}"}}}}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if len(notes) != 2 || notes[0].Name != "A_API_KEY_2" || notes[1].Ref != "{env:A_API_KEY_3}" {
		t.Errorf("notes %+v", notes)
	}

	// Where the agent reads no variable, the file stays on the host.
	for _, f := range []outer.HostFile{
		{Rel: "tui.json", Content: two.Content},
		{Rel: "agent/x.md", Content: []byte("---\ntoken: canary-3-xxxxxxxx\n---\n")},
	} {
		got, notes, ok := guardHostFile(hc, f, map[string]bool{})
		if ok || got != nil || len(notes) == 0 {
			t.Errorf("%s: %q, %v, %v; want it not copied, and named", f.Rel, got, notes, ok)
		}
		for _, n := range notes {
			if strings.Contains(n.Where+n.Why, "canary") || n.Ref != "" {
				t.Errorf("%s: note %+v", f.Rel, n)
			}
		}
	}
	if _, _, ok := guardHostFile(&schema.HostConfig{}, two, map[string]bool{}); ok {
		t.Error("an agent without env_ref: the file was copied")
	}
}
