package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/agents-sandbox/asb/internal/hostgit"
)

// Git is the git CLI. Every git it runs gets hostgit's fixed environment
// and options, and runs in a repository asb wrote (the host repository,
// a session's fresh checkout, a temporary folder) or in the outer folder's
// own: never in a repository the VM can write (docs/vm-repositories.md).
type Git struct {
	Bin string // "git" unless set
}

// gitRun is one git process of asb's: where, whose config, what more in
// its environment, and where its output goes (nil: returned).
type gitRun struct {
	dir    string
	config hostgit.Config
	env    []string
	stdin  io.Reader
	stdout io.Writer
}

// output runs git with args in dir, reading no config but the repository's
// own (hostgit.AsbOnly).
func (g Git) output(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return g.run(ctx, gitRun{dir: dir}, args...)
}

// run runs git as r says and returns its standard output; a failure is a
// ToolError with its exit code and standard error.
func (g Git) run(ctx context.Context, r gitRun, args ...string) ([]byte, error) {
	cmd := hostgit.Command(ctx, g.Bin, r.dir, r.config, args...)
	cmd.Env = append(cmd.Env, r.env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if r.stdout != nil {
		cmd.Stdout = r.stdout
	}
	cmd.Stdin = r.stdin
	if err := cmd.Run(); err != nil {
		te := &ToolError{Cmd: append([]string{"git"}, args...), Output: stderr.String(), Err: err}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			te.Code = ee.ExitCode()
		}
		return stdout.Bytes(), te
	}
	return stdout.Bytes(), nil
}

// Init makes dir a new repository (no commit): the outer folder's own, with
// the user's defaults (their default branch and template).
func (g Git) Init(ctx context.Context, dir string) error {
	if _, err := g.run(ctx, gitRun{dir: dir, config: hostgit.UserConfig}, "init", "--quiet"); err != nil {
		return fmt.Errorf("git init %s: %w", dir, err)
	}
	return nil
}

// IsRepoRoot reports whether dir itself holds a repository (.git).
func IsRepoRoot(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, ".git"))
	return err == nil
}

// IsRepo reports whether dir (an outer folder) is the top of a working git
// repository: a .git that git itself can use (a git init that was killed
// leaves one it cannot, which a new git init completes).
func (g Git) IsRepo(ctx context.Context, dir string) bool {
	if !IsRepoRoot(dir) {
		return false
	}
	out, err := g.output(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return false
	}
	top := strings.TrimSpace(string(out))
	a, errA := filepath.EvalSymlinks(top)
	b, errB := filepath.EvalSymlinks(dir)
	return errA == nil && errB == nil && a == b
}

// NoHistory reports whether the .git in dir holds nothing a user made: no
// object, ref, packed ref or index, as a git init that was killed leaves it
// (its lock files then block every later git init).
func NoHistory(dir string) bool {
	gitDir := filepath.Join(dir, ".git")
	for _, f := range []string{"packed-refs", "index"} {
		if _, err := os.Lstat(filepath.Join(gitDir, f)); err == nil {
			return false
		}
	}
	for _, sub := range []string{"objects", "refs"} {
		found := false
		_ = filepath.WalkDir(filepath.Join(gitDir, sub), func(_ string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				found = true
				return filepath.SkipAll
			}
			return nil
		})
		if found {
			return false
		}
	}
	return true
}

// TrackedFiles lists the files of HEAD's tree at the top level of the
// repository at dir (nil when it has no commit): the folder asb init is
// given, never a repository the VM writes.
func (g Git) TrackedFiles(ctx context.Context, dir string) []string {
	if !IsRepoRoot(dir) {
		return nil // no repository, no history (and no git process to start)
	}
	out, err := g.output(ctx, dir, "ls-tree", "--name-only", "HEAD")
	if err != nil {
		return nil
	}
	return strings.Fields(string(out))
}
