package kubetest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/testkit/testenv"
	"github.com/agents-sandbox/asb/kubeexport"
	"github.com/agents-sandbox/asb/schema"
	"github.com/agents-sandbox/asb/templates"
)

func TestMain(m *testing.M) {
	clean := testenv.PrivateState() // approvals of the test folders stay here
	code := m.Run()
	clean()
	os.Exit(code)
}

// canary is a secret's value: it must reach no object of the cluster.
const canary = "canary-7e2c-never-in-the-cluster"

// origin is a recorded workspace origin, as asb init --workspace URL makes.
var origin = schema.WorkspaceOrigin{URL: "https://github.com/example/demo.git", Branch: "main", Commit: "0123456789abcdef0123456789abcdef01234567"}

// folder lays an outer folder down as asb init does, with the canary as
// every secret's value in secrets.env.
func folder(t *testing.T, opts schema.InitOptions) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), opts.Name)
	plan, err := generator.Render(templates.FS, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := generator.Apply(context.Background(), dir, plan, generator.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	var env strings.Builder
	for _, s := range opts.Secrets {
		env.WriteString(s.Name + "=" + canary + "\n")
	}
	a, _ := generator.LoadAgent(templates.FS, opts.Agent)
	env.WriteString(a.KeyVar + "=" + canary + "\n")
	if err := os.WriteFile(filepath.Join(dir, "secrets.env"), []byte(env.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// exported is the export of dir as asb export kubernetes builds it.
func exported(t *testing.T, dir string, o kubeexport.Options) (*kubeexport.Export, *kubeexport.Source) {
	t.Helper()
	if o.RuntimeClass == "" {
		o.RuntimeClass = "gvisor"
	}
	if o.Egress == "" {
		o.Egress = kubeexport.EgressNone // the plane runs no Cilium
	}
	if o.Image == "" {
		o.Image = "registry.example.com/team/demo:1"
	}
	ex, src, err := kubeexport.Run(dir, o, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	return ex, src
}
