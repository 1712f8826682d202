package kubeexport

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/runner"
)

// The init container's script, run by sh with real git on a bundle made as
// asb kube agent makes it: it waits for the bundle, checks out the
// recorded commit on the recorded branch, or on the session's own branch,
// with the origin as its remote, and removes the bundle; a second run
// leaves the repository as it is.
func TestInitScriptFillsTheWorkspaceFromTheBundle(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git here")
	}
	ctx := context.Background()
	src := t.TempDir()
	gitIn(t, src, "init", "-q", "-b", "main")
	gitIn(t, src, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "one")
	first := strings.TrimSpace(gitIn(t, src, "rev-parse", "HEAD"))
	gitIn(t, src, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "two")
	bundle := filepath.Join(t.TempDir(), "ws.bundle")
	if err := (runner.Git{}).Bundle(ctx, src, bundle); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ session, wantBranch string }{{"", "main"}, {"asb/alice", "asb/alice"}} {
		ws := t.TempDir()
		cmd := exec.Command("sh", "-c", initScript)
		cmd.Env = append(os.Environ(), "ASB_WORKSPACE="+ws, "ASB_ORIGIN=https://example.com/demo.git", "ASB_BRANCH=main",
			"ASB_COMMIT="+first, SessionBranchEnv+"="+tc.session, "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond) // it waits for the bundle
		b, _ := os.ReadFile(bundle)
		part := filepath.Join(ws, ".asb-workspace.bundle.part") // as asb kube agent writes it
		if err := os.WriteFile(part, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(part, filepath.Join(ws, ".asb-workspace.bundle")); err != nil {
			t.Fatal(err)
		}
		if err := waitTimeout(cmd, time.Minute); err != nil {
			t.Fatalf("the script: %v\n%s", err, out.String())
		}
		if !strings.Contains(out.String(), "waiting for the workspace") {
			t.Errorf("the script did not say it waits:\n%s", out.String())
		}
		head := strings.TrimSpace(gitIn(t, ws, "rev-parse", "HEAD"))
		branch := strings.TrimSpace(gitIn(t, ws, "symbolic-ref", "--short", "HEAD"))
		remote := strings.TrimSpace(gitIn(t, ws, "remote", "get-url", "origin"))
		if head != first || branch != tc.wantBranch || remote != "https://example.com/demo.git" {
			t.Errorf("session %q: at %s on %s, origin %s; want %s on %s", tc.session, head, branch, remote, first, tc.wantBranch)
		}
		if _, err := os.Stat(filepath.Join(ws, ".asb-workspace.bundle")); !os.IsNotExist(err) {
			t.Errorf("the bundle is left in the workspace")
		}
		again := exec.Command("sh", "-c", initScript)
		again.Env = cmd.Env
		if o, err := again.CombinedOutput(); err != nil || len(o) > 0 {
			t.Errorf("a second run: %v %s; want nothing done", err, o)
		}
	}
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func waitTimeout(cmd *exec.Cmd, d time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		_ = cmd.Process.Kill()
		return <-done
	}
}
