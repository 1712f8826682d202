package folderfs

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestIndexPaths reads what git itself wrote, in every index form git
// makes: versions 2, 3 (an intent-to-add entry is extended) and 4, a
// SHA-256 repository, a split index.
func TestIndexPaths(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	for _, c := range []struct {
		name string
		init []string
		then [][]string
	}{
		{"v2", []string{"init", "-q"}, nil},
		{"v3", []string{"init", "-q"}, [][]string{{"add", "-N", "later.txt"}}},
		{"v4", []string{"init", "-q"}, [][]string{{"update-index", "--index-version", "4"}}},
		{"sha256", []string{"init", "-q", "--object-format=sha256"}, nil},
		{"split", []string{"init", "-q"}, [][]string{{"update-index", "--split-index"}, {"add", "zz.txt"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			git(t, dir, c.init...)
			for _, f := range []string{"Taskfile.yml", "sandbox.yaml", ".asb/state.yaml", "toolchain/Dockerfile", "a-very-long-name-that-pads-differently.txt", "later.txt", "zz.txt"} {
				write(t, filepath.Join(dir, f), f)
			}
			git(t, dir, "add", "-f", "Taskfile.yml", "sandbox.yaml", ".asb/state.yaml", "toolchain/Dockerfile", "a-very-long-name-that-pads-differently.txt")
			for _, a := range c.then {
				git(t, dir, a...)
			}
			paths, _, err := IndexPaths(filepath.Join(dir, ".git", "index"))
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"Taskfile.yml", ".asb/state.yaml", "toolchain/Dockerfile", "a-very-long-name-that-pads-differently.txt"} {
				if !slices.Contains(paths, want) {
					t.Errorf("%s missing from %q", want, paths)
				}
			}
			if c.name == "v3" && !slices.Contains(paths, "later.txt") {
				t.Errorf("the intent-to-add entry is missing from %q", paths)
			}
		})
	}
}

// TestLocal: a file of .asb/ that git tracks is refused as missing, once
// said; an untracked one is the machine's own; a folder below the
// repository's top is looked up by its prefix; no repository tracks
// nothing.
func TestLocal(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	repo := t.TempDir()
	dir := filepath.Join(repo, "sub", "proj")
	git(t, repo, "init", "-q")
	write(t, filepath.Join(dir, ".asb/serve.json"), "{}")
	write(t, filepath.Join(dir, ".asb/state.yaml"), "x")
	write(t, filepath.Join(dir, "sandbox.yaml"), "x")
	if err := Local(dir, ".asb/serve.json"); err != nil {
		t.Fatalf("nothing is tracked yet: %v", err)
	}
	git(t, repo, "add", "-f", "sub/proj/.asb/serve.json", "sub/proj/sandbox.yaml")
	var said []string
	OnIgnored = func(rel string) { said = append(said, rel) }
	defer func() { OnIgnored = nil }()
	for range 2 {
		err := Local(dir, ".asb/serve.json")
		var te *TrackedError
		if !errors.As(err, &te) || !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("a tracked file: %v", err)
		}
	}
	if len(said) != 1 || said[0] != ".asb/serve.json" {
		t.Errorf("said %q, want .asb/serve.json once", said)
	}
	if err := Local(dir, ".asb/state.yaml"); err != nil {
		t.Errorf("an untracked file: %v", err)
	}
	tr, err := ReadTracked(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !tr.TopTracked("sandbox.yaml") || tr.TopTracked("notes.txt") || !tr.TopTracked(".asb") {
		t.Errorf("top names: %q", tr.Top)
	}
	plain := t.TempDir()
	write(t, filepath.Join(plain, ".asb/serve.json"), "{}")
	if err := Local(plain, ".asb/serve.json"); err != nil {
		t.Errorf("no repository: %v", err)
	}
}

// TestLocalUnderATrackedEntry: what a clone brings under .asb/ without a
// tracked file of its own path is tracked too: below a link's entry
// (.asb/git -> ../workspace/x), below a submodule's (a gitlink at .asb),
// and a folder asked about with a tracked file under it.
func TestLocalUnderATrackedEntry(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	const commit = "0123456789abcdef0123456789abcdef01234567"
	cases := []struct {
		name  string
		entry []string // git update-index --cacheinfo
		rel   string
	}{
		{"a link at .asb/git", []string{"120000,e69de29bb2d1d6434b8b29ae775ad8c2e48c5391,.asb/git"}, ".asb/git/config"},
		{"a submodule at .asb", []string{"160000," + commit + ",.asb"}, ".asb/state.yaml"},
		{"a submodule at .asb/warm", []string{"160000," + commit + ",.asb/warm"}, ".asb/warm/0a.rec"},
		{"a file under the folder asked", []string{"100644,e69de29bb2d1d6434b8b29ae775ad8c2e48c5391,.asb/import/x/HEAD"}, ".asb/import"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			git(t, dir, "init", "-q")
			if err := Local(dir, c.rel); err != nil {
				t.Fatalf("nothing is tracked yet: %v", err)
			}
			for _, e := range c.entry {
				git(t, dir, "update-index", "--add", "--cacheinfo", e)
			}
			if err := Local(dir, c.rel); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("Local(%s) with %s tracked = %v, want a TrackedError", c.rel, c.entry, err)
			}
			if err := Local(dir, ".asb/serve.json"); err != nil && c.name != "a submodule at .asb" {
				t.Errorf("a file beside the entry: %v", err)
			}
		})
	}
}

// TestLocalIgnoresCase: on a file system that ignores case, a commit of
// .ASB/serve.json is what asb opens as .asb/serve.json.
func TestLocalIgnoresCase(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	git(t, dir, "update-index", "--add", "--cacheinfo", "100644,e69de29bb2d1d6434b8b29ae775ad8c2e48c5391,.ASB/Serve.json")
	if err := Local(dir, ".asb/serve.json"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Local(.asb/serve.json) with .ASB/Serve.json tracked = %v, want a TrackedError", err)
	}
	if err := Local(dir, ".asb/state.yaml"); err != nil {
		t.Errorf("a file beside it: %v", err)
	}
}
