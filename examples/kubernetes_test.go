package examples

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/testkit/testenv"
	"github.com/agents-sandbox/asb/kubeexport"
	"github.com/agents-sandbox/asb/schema"
	"github.com/agents-sandbox/asb/templates"
)

// kubernetesDir is the golden export: opencode-github's folder, with the
// workspace origin asb init --workspace records, exported for two sessions.
const kubernetesDir = "kubernetes"

// TestExamplesKubernetes fails when examples/kubernetes/ differs from what
// asb export kubernetes writes now; make examples regenerates it (its
// -run TestExamples matches this test too).
func TestExamplesKubernetes(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir()) // the folder's approval stays here
	var gh example
	for _, ex := range examples() {
		if ex.dir == "opencode-github" {
			gh = ex
		}
	}
	opts := gh.opts
	opts.Record = &schema.Record{Asb: "dev", Workspace: schema.WorkspaceOrigin{
		URL: "https://github.com/example/demo.git", Branch: "main", Commit: "0123456789abcdef0123456789abcdef01234567"}}
	dir := filepath.Join(t.TempDir(), "demo-github")
	plan, err := generator.Render(templates.FS, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := generator.Apply(context.Background(), dir, plan, generator.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Approve(t, dir) // as asb init approves what it wrote
	ex, _, err := kubeexport.Run(dir, kubeexport.Options{RuntimeClass: "gvisor", Image: "registry.example.com/team/demo-github:opencode", Egress: kubeexport.EgressCilium,
		Sessions: []string{"alice", "bob"}}, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := kubeexport.Write(ex, out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	got := readDir(t, out)
	if *update {
		for name := range readDir(t, kubernetesDir) {
			if err := os.Remove(filepath.Join(kubernetesDir, name)); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.CopyFS(kubernetesDir, os.DirFS(out)); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(got, readDir(t, kubernetesDir)); diff != "" {
		t.Errorf("examples/%s differs from what asb export kubernetes writes now (-written +committed); run make examples:\n%s", kubernetesDir, diff)
	}
}

func readDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "README.md" {
			continue // says what the folder is; not written by the export
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}
