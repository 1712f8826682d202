package yamledit

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

func load(t *testing.T, name string) (*Doc, *yaml.Node, []byte) {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	root, err := d.Root()
	if err != nil {
		t.Fatal(err)
	}
	return d, root, data
}

func out(t *testing.T, d *Doc) string {
	t.Helper()
	b, err := d.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestNoEditIsIdentity(t *testing.T) {
	d, _, data := load(t, "commented.yaml")
	if diff := cmp.Diff(string(data), out(t, d)); diff != "" {
		t.Errorf("re-encoding without an edit changed the file (-want +got):\n%s", diff)
	}
}

func TestAppendAndRemove(t *testing.T) {
	d, root, data := load(t, "commented.yaml")
	allow := Get(Get(root, "network"), "allow")
	Append(allow, String("registry.npmjs.org"))
	deny := Get(Get(root, "network"), "deny")
	Append(deny, String("bad.example.com"))
	Remove(Get(root, "mounts"), func(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode })
	want := strings.NewReplacer(
		`    - "api.github.com"`+"\n", `    - "api.github.com"`+"\n"+`    - "registry.npmjs.org"`+"\n",
		`deny: [evil.example.com]`, `deny: [evil.example.com, bad.example.com]`,
		// The comment below the removed entry stays, below the entry before.
		`  - "./notes:/notes:ro"   # short form`+"\n"+`  # below the mounts`, `    # below the mounts`,
	).Replace(string(data))
	if diff := cmp.Diff(want, out(t, d)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestSetNewKeyInOrder(t *testing.T) {
	d, root, data := load(t, "commented.yaml")
	order := []string{"image", "cpus", "memory", "workdir", "mounts", "network", "ports"}
	k := Set(root, "workdir", String("/workspace"), order)
	_ = k
	k = Set(root, "ports", Seq(Quoted("5173:5173")), order)
	SpaceBefore(k)
	want := strings.Replace(string(data), "memory: \"4G\"\n", "memory: \"4G\"\nworkdir: /workspace\n", 1)
	want = strings.Replace(want, "  deny: [evil.example.com]\n", "  deny: [evil.example.com]\n\nports:\n  - \"5173:5173\"\n", 1)
	if diff := cmp.Diff(want, out(t, d)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestReplaceScalarWithMapping(t *testing.T) {
	src := "# head\n\nimage: x\n\n# public internet\nnetwork: public  # for now\n"
	d, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	root, _ := d.Root()
	m := Map()
	Set(m, "policy", String("public"), nil)
	Set(m, "deny", Seq(String("a.example.com")), nil)
	Set(root, "network", m, nil)
	want := "# head\n\nimage: x\n\n# public internet\nnetwork: # for now\n  policy: public\n  deny:\n    - a.example.com\n"
	if diff := cmp.Diff(want, out(t, d)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestDeleteKeepsNeighbours(t *testing.T) {
	d, root, data := load(t, "commented.yaml")
	if !Delete(root, "mounts") {
		t.Fatal("mounts not found")
	}
	start := strings.Index(string(data), "# Mounts")
	end := strings.Index(string(data), "# Egress")
	want := string(data[:start]) + string(data[end:])
	got := out(t, d)
	// The comment below the last mount goes with the mounts.
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestEmptyDocuments(t *testing.T) {
	for _, src := range []string{"", "# only comments\n# here\n", "{}\n"} {
		d, err := Parse([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		root, err := d.Root()
		if err != nil {
			t.Fatal(err)
		}
		s := Map()
		Set(s, "value", Quoted("${TOKEN}"), nil)
		Set(root, "TOKEN", s, nil)
		got := out(t, d)
		var back map[string]map[string]string
		if err := yaml.Unmarshal([]byte(got), &back); err != nil || back["TOKEN"]["value"] != "${TOKEN}" {
			t.Errorf("%q → %q: %v", src, got, err)
		}
		if strings.HasPrefix(src, "#") && !strings.HasPrefix(got, strings.TrimSpace(src)) {
			t.Errorf("%q lost its comments: %q", src, got)
		}
	}
}

func TestRefusesTwoDocuments(t *testing.T) {
	if _, err := Parse([]byte("a: 1\n---\nb: 2\n")); err == nil {
		t.Error("two documents parsed without error")
	}
	d, _ := Parse([]byte("- a\n- b\n"))
	if _, err := d.Root(); err == nil {
		t.Error("a top-level list gave a mapping")
	}
}

func TestFourSpaceIndentStays(t *testing.T) {
	src := "network:\n    allow:\n        - a.example.com\nmounts:\n    -   bind: ./w\n        target: /w\n"
	d, _ := Parse([]byte(src))
	root, _ := d.Root()
	Append(Get(Get(root, "network"), "allow"), String("b.example.com"))
	got := out(t, d)
	want := "network:\n    allow:\n        - a.example.com\n        - b.example.com\n"
	if !strings.HasPrefix(got, want) {
		t.Errorf("got %q, want prefix %q", got, want)
	}
}

func TestLiteralBlockKept(t *testing.T) {
	src := "scripts:\n  setup: |\n    echo one\n\n    # not a comment\n    echo two\nimage: x\n"
	d, _ := Parse([]byte(src))
	root, _ := d.Root()
	Set(root, "cpus", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: "2"}, nil)
	got := out(t, d)
	var back struct{ Scripts map[string]string }
	if err := yaml.Unmarshal([]byte(got), &back); err != nil {
		t.Fatal(err)
	}
	if want := "echo one\n\n# not a comment\necho two\n"; back.Scripts["setup"] != want {
		t.Errorf("script = %q, want %q", back.Scripts["setup"], want)
	}
}
