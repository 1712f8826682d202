package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agents-sandbox/asb/internal/testkit/testenv"
)

// addGit gives the boot session git on both sides: in the VM's image (the
// agent's own git) and on the guest host (asb's, and the user's). The host
// git of this machine is copied with the libraries it links (the busybox
// image and the guest's initramfs have none), at Debian's exec path, so
// that its subcommands (index-pack, upload-pack) are found without
// GIT_EXEC_PATH, which asb never passes on. workspace/ becomes a
// repository with one commit, as its user made it before any VM ran, and
// $DATA/canary.sh is the host program the VM names: it records its run in
// $DATA/canary-ran.
func addGit(t *testing.T, ctx context.Context, g *testenv.Guest, dir string) {
	t.Helper()
	bin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git on this host to copy into the boot guest")
	}
	if bin, err = filepath.EvalSymlinks(bin); err != nil {
		t.Fatal(err)
	}
	files := append([]string{bin}, linkedLibs(t, ctx, bin)...)
	for _, root := range []string{filepath.Join(g.Data, "git", "root"), filepath.Join(dir, "toolchain", "rootfs")} {
		for _, f := range files {
			dst := filepath.Join(root, f)
			if f == bin {
				dst = filepath.Join(root, "usr", "lib", "git-core", "git")
			}
			copyFile(t, f, dst)
		}
		// Hard links, not symbolic ones: asb's trust check reads the image's
		// files as plain files, and refuses a link in toolchain/.
		for _, name := range []string{"usr/bin/git", "usr/lib/git-core/git-upload-pack"} {
			p := filepath.Join(root, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Link(filepath.Join(root, "usr", "lib", "git-core", "git"), p); err != nil {
				t.Fatal(err)
			}
		}
	}
	g.WriteFile(t, "canary.sh", []byte("#!/bin/sh\necho \"$0 $*\" >>\"${DATA:-/data}/canary-ran\"\nexit 1\n"), 0o755)
	ws := filepath.Join(dir, "workspace")
	env := testenv.WithEnv(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=user", "GIT_AUTHOR_EMAIL=user@host", "GIT_COMMITTER_NAME=user", "GIT_COMMITTER_EMAIL=user@host")
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-qm", "the user's first commit"}} {
		testenv.Run(t, ctx, ws, env, append([]string{"git"}, args...)...)
	}
}

var lddRe = regexp.MustCompile(`(?m)(?:=>\s*)?(/\S+)\s+\(0x`)

// linkedLibs are the shared libraries bin loads, its loader included.
func linkedLibs(t *testing.T, ctx context.Context, bin string) []string {
	t.Helper()
	out := testenv.Run(t, ctx, "", os.Environ(), "ldd", bin)
	var libs []string
	for _, m := range lddRe.FindAllStringSubmatch(string(out), -1) {
		libs = append(libs, m[1])
	}
	if len(libs) == 0 {
		t.Fatalf("ldd %s lists no library:\n%s", bin, out)
	}
	return libs
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	raw, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(src)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dst, string(raw), fi.Mode().Perm())
}

// TestRealBootVMRepository: the agent's own steps, as dev in the booted VM
// with git: it commits in /workspace, then plants a hook, a
// core.fsmonitor, a clean filter (named by the committed .gitattributes)
// and a URL rewrite with an ssh command, each naming a program of the host,
// and changes a file. The host brings the commit in as the README says
// (asb fetch, then git fetch asb in a checkout of the user's own): the
// commit arrives, and the host's program never runs.
func TestRealBootVMRepository(t *testing.T) {
	s := bootRun(t)
	if out := ok(t, s, "vm_git"); !strings.Contains(out, "from the vm") {
		t.Fatalf("the agent's commit in the VM: %q", out)
	}
	out := ok(t, s, "host_fetch")
	if !regexp.MustCompile(`workspace/main +[0-9a-f]+\.\.[0-9a-f]+ +1 new commit`).MatchString(out) {
		t.Errorf("asb fetch did not report the agent's commit on workspace/main:\n%s", out)
	}
	if !strings.Contains(out, ".gitattributes") {
		t.Errorf("asb fetch did not list .gitattributes, which the agent changed and git obeys:\n%s", out)
	}
	if out := ok(t, s, "user_fetch"); !strings.Contains(out, "from the vm") {
		t.Errorf("the user's checkout did not get the agent's commit from asb's host repository:\n%s", out)
	}
	if out := ok(t, s, "host_canary"); strings.Contains(out, "canary") {
		t.Fatalf("a program the VM named ran on the host:\n%s", out)
	}
	total := 0.0
	for _, name := range []string{"host_fetch_before", "vm_git", "host_fetch", "user_fetch", "host_canary"} {
		total += s.Steps[name].Secs
	}
	t.Logf("these steps took %.1f s of the %s guest's time (asb fetch: %.1f s first, %.1f s after the commit)",
		total, s.Shape, s.Steps["host_fetch_before"].Secs, s.Steps["host_fetch"].Secs)
}
