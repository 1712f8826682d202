package runner

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/agents-sandbox/asb/schema"
)

// A session's checkout (asb session new) is a clone of the workspace with
// a .git folder of its own: --no-hardlinks, so it shares no file with the
// workspace's repository that its VM could change, and no origin, so its
// .git names no host path. Git inside the VM then needs nothing but what is
// under /workspace. The branch comes back to the workspace by a fetch that
// asb runs (SyncSessionBranch), so the user merges it there as usual.

// CurrentBranch is the branch checked out in the repository at dir, or
// "HEAD" when it is detached.
func (g Git) CurrentBranch(ctx context.Context, dir string) (string, error) {
	out, err := g.output(ctx, dir, "symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil {
		if _, err := g.output(ctx, dir, "rev-parse", "--verify", "--quiet", "HEAD"); err != nil {
			return "", fmt.Errorf("%s has no commit yet: commit something first (a session branches from it)", dir)
		}
		return "HEAD", nil
	}
	return strings.TrimSpace(string(out)), nil
}

// Commit resolves ref to a commit in the repository at dir.
func (g Git) Commit(ctx context.Context, dir, ref string) (string, error) {
	if strings.HasPrefix(ref, "-") {
		return "", fmt.Errorf("%q is not a git ref", ref)
	}
	out, err := g.output(ctx, dir, "rev-parse", "--verify", "--quiet", "--end-of-options", ref+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("%q is not a commit of %s: give a branch, tag or commit it has", ref, dir)
	}
	return strings.TrimSpace(string(out)), nil
}

// SessionClone makes dst (which must not exist) a clone of the repository
// at src with branch checked out at commit, and nothing in its .git that
// names a host path.
func (g Git) SessionClone(ctx context.Context, src, dst, branch, commit string) error {
	steps := [][]string{
		{"clone", "--quiet", "--no-hardlinks", "--no-checkout", "--", src, dst},
		{"-C", dst, "checkout", "--quiet", "-b", branch, commit},
		{"-C", dst, "remote", "remove", "origin"},
		{"-C", dst, "reflog", "expire", "--expire=now", "--all"},
	}
	for _, s := range steps {
		if _, err := g.output(ctx, "", s...); err != nil {
			return fmt.Errorf("make the session's checkout: %w", err)
		}
	}
	return nil
}

// safeUploadPack runs the session checkout's side of a fetch with the
// options that keep its config (which its VM can write) from running
// programs.
const safeUploadPack = "git -c core.fsmonitor=false -c core.hooksPath=/dev/null -c uploadpack.allowAnySHA1InWant=false upload-pack"

// SyncSessionBranch brings branch of the session's checkout into the
// workspace's repository (fast-forward only: a branch the user moved there
// on their own is never overwritten).
func (g Git) SyncSessionBranch(ctx context.Context, workspace, checkout, branch string) error {
	ref := "refs/heads/" + branch
	_, err := g.output(ctx, workspace, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head",
		"--upload-pack="+safeUploadPack, "--", checkout, ref+":"+ref)
	if err != nil {
		return fmt.Errorf("bring %s into workspace/: %w", branch, err)
	}
	return nil
}

// AheadBehind counts the commits of branch not on base (ahead) and of base
// not on branch (behind), in the repository at dir.
func (g Git) AheadBehind(ctx context.Context, dir, base, branch string) (ahead, behind int, err error) {
	out, err := g.output(ctx, dir, "rev-list", "--left-right", "--count", "--end-of-options", base+"..."+branch)
	if err != nil {
		return 0, 0, err
	}
	f := strings.Fields(string(out))
	if len(f) != 2 {
		return 0, 0, fmt.Errorf("git rev-list --count: %q", out)
	}
	behind, _ = strconv.Atoi(f[0])
	ahead, _ = strconv.Atoi(f[1])
	return ahead, behind, nil
}

// Unmerged counts the commits of branch that no other branch of the
// repository at dir holds.
func (g Git) Unmerged(ctx context.Context, dir, branch string) (int, error) {
	out, err := g.output(ctx, dir, "rev-list", "--count", "refs/heads/"+branch, "--not", "--exclude="+branch, "--branches")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(out)))
}

// LastCommit is the committer time of ref's commit in the repository at dir.
func (g Git) LastCommit(ctx context.Context, dir, ref string) (time.Time, error) {
	out, err := g.output(ctx, dir, "log", "-1", "--format=%cI", "--end-of-options", ref)
	if err != nil {
		return time.Time{}, err
	}
	return time.Parse(time.RFC3339, strings.TrimSpace(string(out)))
}

// DeleteBranch removes branch from the repository at dir, merged or not.
func (g Git) DeleteBranch(ctx context.Context, dir, branch string) error {
	_, err := g.output(ctx, dir, "branch", "--quiet", "-D", "--", branch)
	return err
}

// HasBranch reports whether the repository at dir has branch.
func (g Git) HasBranch(ctx context.Context, dir, branch string) bool {
	_, err := g.output(ctx, dir, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch)
	return err == nil
}

// DiffTo writes to w the diff of what branch changed since it left base
// (base...branch), in the repository at dir, with no external diff or
// text conversion the repository's config could name.
func (g Git) DiffTo(ctx context.Context, dir, base, branch string, stat bool, w io.Writer) error {
	args := []string{"diff", "--no-ext-diff", "--no-textconv", "--no-color"}
	if stat {
		args = append(args, "--stat")
	}
	cmd := exec.CommandContext(ctx, g.bin(), schema.GitArgs(append(args, "--end-of-options", base+"..."+branch, "--")...)...)
	cmd.Dir = dir
	cmd.Env = append(cmd.Environ(), schema.GitEnv...)
	cmd.Stdout = w
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("git diff %s...%s: %w: %s", base, branch, err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// Dirty reports whether the checkout at dir has changes not committed
// (untracked files included).
func (g Git) Dirty(ctx context.Context, dir string) (bool, error) {
	out, err := g.output(ctx, dir, "status", "--porcelain", "--untracked-files=normal")
	if err != nil {
		return false, err
	}
	return len(strings.TrimSpace(string(out))) > 0, nil
}
