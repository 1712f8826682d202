package cmdutil

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/templates"
)

// gateFolder is a folder nobody approved (a first clone, as far as this
// user's state knows), and the judge of a user with no policy.
func gateFolder(t *testing.T) (string, outer.Judge) {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "demo")
	plan, err := generator.Render(templates.FS, generator.DefaultOptions("opencode", "demo"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := generator.Apply(context.Background(), dir, plan, generator.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": filepath.Join(base, "home")}
	return dir, outer.Judge{Templates: templates.FS, Getenv: func(k string) string { return env[k] }}
}

// TestGateAsksOnceAtATerminal: a folder not approved is shown; at a
// terminal a y approves it and the run goes on, anything else refuses;
// without a terminal nothing is asked, and the refusal names asb trust.
func TestGateAsksOnceAtATerminal(t *testing.T) {
	for _, c := range []struct {
		name   string
		asked  bool
		answer string
		runs   bool
	}{{"yes", true, "y\n", true}, {"no", true, "n\n", false}, {"empty", true, "", false}, {"no terminal", false, "y\n", false}} {
		t.Run(c.name, func(t *testing.T) {
			dir, j := gateFolder(t)
			var errOut bytes.Buffer
			io := &IOStreams{In: strings.NewReader(c.answer), Out: &bytes.Buffer{}, ErrOut: &errOut}
			err := Gate(context.Background(), io, j, dir, c.asked, false)
			if (err == nil) != c.runs {
				t.Fatalf("Gate: %v; want it to run: %v\n%s", err, c.runs, errOut.String())
			}
			if !strings.Contains(errOut.String(), "What it would grant the agent") {
				t.Errorf("the folder was not shown:\n%s", errOut.String())
			}
			if asked := strings.Contains(errOut.String(), "[y/N]"); asked != c.asked {
				t.Errorf("asked %v, want %v", asked, c.asked)
			}
			if !c.runs && !strings.Contains(err.Error(), "approve it with: asb trust -d "+dir) {
				t.Errorf("the refusal names no asb trust command: %v", err)
			}
			v, err := j.Check(dir)
			if err != nil || v.Trusted != c.runs {
				t.Errorf("approved afterwards: %v (%v); want %v", v.Trusted, err, c.runs)
			}
		})
	}
}

// TestGateNeverApprovesWhatThePolicyForbids: a y at the terminal does not
// approve a folder the policy refuses.
func TestGateNeverApprovesWhatThePolicyForbids(t *testing.T) {
	dir, j := gateFolder(t)
	j.MachinePolicy = filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(j.MachinePolicy, []byte("network_modes: [none]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	io := &IOStreams{In: strings.NewReader("y\n"), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}
	err := Gate(context.Background(), io, j, dir, true, false)
	if err == nil || !strings.Contains(err.Error(), "network allow is not allowed by this machine's policy") {
		t.Fatalf("Gate: %v", err)
	}
}
