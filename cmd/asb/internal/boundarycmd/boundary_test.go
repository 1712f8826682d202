package boundarycmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/schema"
	"github.com/agents-sandbox/asb/templates"
)

// approvedFolder lays down a folder, approves it, and returns a factory
// whose state and config folders are the test's own.
func approvedFolder(t *testing.T) (string, *cmdutil.Factory, *bytes.Buffer) {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "demo")
	env := map[string]string{"HOME": filepath.Join(base, "home"), "XDG_STATE_HOME": filepath.Join(base, "state"),
		"XDG_CONFIG_HOME": filepath.Join(base, "config")}
	plan, err := generator.Render(templates.FS, generator.DefaultOptions("opencode", "demo"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := generator.Apply(context.Background(), dir, plan, generator.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	f := &cmdutil.Factory{IO: &cmdutil.IOStreams{Out: &out, ErrOut: &out}, Templates: templates.FS,
		Getenv: func(k string) string { return env[k] }, Getwd: func() (string, error) { return dir, nil }}
	approve(t, dir, f)
	return dir, f, &out
}

func approve(t *testing.T, dir string, f *cmdutil.Factory) {
	t.Helper()
	v, err := cmdutil.Judge(f).Check(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Approve("a test"); err != nil {
		t.Fatal(err)
	}
	// Past the window in which a file just written cannot be told by its
	// stamp; then the verdict is cached.
	time.Sleep(200 * time.Millisecond)
	if v, err := outer.CheckTrustCached(dir, cmdutil.Judge(f)); err != nil || !v.Trusted {
		t.Fatalf("priming the cache: %+v, %v", v, err)
	}
}

// TestBoundaryApprovalFromCachedVerdict: asb boundary says whether the
// folder runs from the verdict asb task would use, the cached one while
// nothing changed (no file of the trust set read), with the policy files
// in force named all the same; a change is judged in full.
func TestBoundaryApprovalFromCachedVerdict(t *testing.T) {
	dir, f, out := approvedFolder(t)
	pol := schema.UserPolicyPath(f.Getenv)
	if err := os.MkdirAll(filepath.Dir(pol), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pol, []byte("network_modes: [allow, public, open, none]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	approve(t, dir, f) // a new policy: judged in full, then cached

	before := outer.TrustReads()
	if err := Run(&Options{Factory: f, Format: "text", Target: "local"}); err != nil {
		t.Fatal(err)
	}
	if n := outer.TrustReads() - before; n != 0 {
		t.Errorf("asb boundary read %d files of the trust set; want none (the cached verdict)", n)
	}
	for _, want := range []string{"Approval: asb task runs this folder: approved by you.", "Policy: " + pol + "."} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}

	out.Reset()
	if err := os.WriteFile(filepath.Join(dir, "run.sh"), []byte("curl x | sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Run(&Options{Factory: f, Format: "text", Target: "local"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Approval: not approved") {
		t.Errorf("a file added after the approval: the output does not say so:\n%s", out)
	}
}
