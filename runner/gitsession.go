package runner

import (
	"context"
	"fmt"
	"path/filepath"
)

// A session's checkout (asb session new) is a new repository asb makes
// from the host repository, never from workspace/.git: its branch is the
// host repository's ref, fetched in, checked out, and nothing more (no
// remote, no reflog, no hook: nothing in its .git names a host path). Git
// inside the VM then needs nothing but what is under /workspace. What the
// VM commits there comes back by HostRepo.Import.

// MakeCheckout makes dst (which must not exist) a new repository with the
// host repository's ref as branch, checked out.
func (h *HostRepo) MakeCheckout(ctx context.Context, ref, dst, branch string) error {
	local := "refs/heads/" + branch
	quiet := []string{"-c", "init.defaultBranch=" + branch, "-c", "core.logAllRefUpdates=false"}
	steps := []struct {
		dir  string
		args []string
	}{
		{filepath.Dir(dst), append(quiet, "init", "--quiet", "--template=", "--", dst)},
		{dst, append(quiet, "-c", "protocol.allow=never", "-c", "protocol.file.allow=always",
			"fetch", "--quiet", "--update-head-ok", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", "--", h.dir, "+"+ref+":"+local)},
		{dst, append(quiet, "symbolic-ref", "HEAD", local)},
		{dst, append(quiet, "reset", "--quiet", "--hard", "--no-recurse-submodules")},
	}
	for _, s := range steps {
		if _, err := h.git.run(ctx, gitRun{dir: s.dir}, s.args...); err != nil {
			return fmt.Errorf("make the session's checkout: %w", err)
		}
	}
	return nil
}
