package kubeexport

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/testkit/testenv"
	"github.com/agents-sandbox/asb/schema"
	"github.com/agents-sandbox/asb/templates"
)

func TestMain(m *testing.M) {
	clean := testenv.PrivateState() // approvals of the test folders stay here
	code := m.Run()
	clean()
	os.Exit(code)
}

func moduleDir(t *testing.T, mod string) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", mod).Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		t.Skipf("%s is not in the module cache here (go list -m: %v)", mod, err)
	}
	return dir
}

// The canary: a value no exported byte may hold.
const canary = "canary-4f1d9b2e-never-exported"

// origin is a recorded workspace origin, as asb init --workspace URL makes.
var origin = schema.WorkspaceOrigin{URL: "https://github.com/example/demo.git", Branch: "main", Commit: "0123456789abcdef0123456789abcdef01234567"}

// folder lays an outer folder down as asb init does, with its secrets'
// values (the canary) in secrets.env.
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
	testenv.Approve(t, dir) // as asb init approves what it wrote
	return dir
}

// richOptions are a folder with every part the export carries: secrets,
// ports, an allow list, a second agent, a recorded origin.
func richOptions() schema.InitOptions {
	o := generator.DefaultOptions("opencode", "demo-github")
	o.Secrets = []schema.SecretSpec{{Name: "GITHUB_TOKEN", Hosts: []string{"api.github.com", "github.com"}}}
	o.Allow = []string{"registry.npmjs.org", "*.npmjs.org"}
	o.Ports = []string{"5173:5173", "9000:9000/udp"}
	o.Also = []string{"claude-code"}
	o.Record = &schema.Record{Asb: "dev", Workspace: origin}
	return o
}

// export runs asb-export's Main on dir and returns the files of -o, with
// stdout and stderr.
func export(t *testing.T, dir string, args ...string) (map[string][]byte, string, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "k8s")
	var stdout, stderr bytes.Buffer
	code := Main(append([]string{"--dir", dir, "-o", out, "--image", "registry.example.com/team/demo:1"}, args...), &stdout, &stderr, os.Getenv)
	if code != 0 {
		t.Fatalf("asb-export exited %d: %s", code, stderr.String())
	}
	files := map[string][]byte{}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(out, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = b
	}
	return files, stdout.String(), stderr.String()
}

// validateAll checks every written resource: agent-sandbox's against their
// CRDs, the rest by the rules that apply to them; a kind nobody checks
// fails.
func validateAll(t *testing.T, crds map[string]*crdSchema, files map[string][]byte) map[string]int {
	t.Helper()
	kinds := map[string]int{}
	for name, b := range files {
		if name == NotesFile {
			continue
		}
		var head struct{ APIVersion, Kind string }
		if err := yaml.Unmarshal(b, &head); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		kinds[head.Kind]++
		var errs field.ErrorList
		switch s, ok := crds[head.APIVersion+"/"+head.Kind]; {
		case ok:
			errs = validateCR(t, s, b)
		case head.APIVersion == "v1" && head.Kind == "ConfigMap":
			errs = validateConfigMap(t, b)
		case head.APIVersion == "cilium.io/v2" && head.Kind == "CiliumNetworkPolicy":
			errs = validateCilium(t, b)
		default:
			t.Errorf("%s: %s %s is checked by nothing", name, head.APIVersion, head.Kind)
		}
		for _, e := range errs {
			t.Errorf("%s: %v", name, e)
		}
	}
	return kinds
}

// validateConfigMap: keys as the API server takes them, under its size
// limit, metadata valid.
func validateConfigMap(t *testing.T, b []byte) field.ErrorList {
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict(b, &cm); err != nil {
		return field.ErrorList{field.Invalid(nil, nil, err.Error())}
	}
	var errs field.ErrorList
	for k := range cm.Data {
		for _, msg := range validation.IsConfigMapKey(k) {
			errs = append(errs, field.Invalid(field.NewPath("data").Key(k), k, msg))
		}
	}
	if len(b) > 1<<20 {
		errs = append(errs, field.TooLong(field.NewPath("data"), "", 1<<20))
	}
	return append(errs, rootMeta(t, mustMap(t, b))...)
}

// validateCilium: the fields Cilium's CRD requires, and metadata. (Its
// CRD is not vendored: it is Cilium's, not agent-sandbox's.)
func validateCilium(t *testing.T, b []byte) field.ErrorList {
	var p CiliumNetworkPolicy
	if err := yaml.UnmarshalStrict(b, &p); err != nil {
		return field.ErrorList{field.Invalid(nil, nil, err.Error())}
	}
	var errs field.ErrorList
	if len(p.Spec.EndpointSelector.MatchLabels) == 0 {
		errs = append(errs, field.Required(field.NewPath("spec", "endpointSelector"), "selects every pod"))
	}
	return append(errs, rootMeta(t, mustMap(t, b))...)
}

func mustMap(t *testing.T, b []byte) map[string]any {
	m := map[string]any{}
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// noCanary fails when the canary is in any exported byte or output.
func noCanary(t *testing.T, files map[string][]byte, outputs ...string) {
	t.Helper()
	for name, b := range files {
		if bytes.Contains(b, []byte(canary)) {
			t.Errorf("%s holds a secret's value", name)
		}
	}
	for _, o := range outputs {
		if strings.Contains(o, canary) {
			t.Errorf("the output holds a secret's value:\n%s", o)
		}
	}
}
