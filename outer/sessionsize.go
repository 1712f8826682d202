package outer

import (
	"context"
	"fmt"

	"github.com/agents-sandbox/asb/runner"
)

// checkoutFits refuses a session whose base would fill the disk. The base
// is commonly a branch the VM committed to: a blob of zeros is a few
// kilobytes in the VM's repository and its whole size in the checkout
// asb session new writes on the host. What checking out the base writes
// may take at most half the free space of the folder's file system; the
// message names the largest file, so a commit the user did not expect is
// found. free nil checks nothing.
func checkoutFits(ctx context.Context, dir string, h *runner.HostRepo, s Session, free func(string) (uint64, error)) error {
	if free == nil {
		return nil
	}
	avail, err := free(dir)
	if err != nil {
		return nil // no figure to judge by: msb's own disk checks remain
	}
	size, err := h.TreeSize(ctx, s.BaseCommit)
	if err != nil {
		return fmt.Errorf("session %s: %w", s.Name, err)
	}
	if uint64(size.Bytes) <= avail/2 {
		return nil
	}
	return fmt.Errorf("session %s not made: its base %s (commit %.12s) writes out %s in %d files (the largest, %s, %s), more than half of the %s free on the disk of %s; "+
		"a commit made in the VM can be small in its repository and huge written out: look at it in a checkout of your own first (asb fetch says how), or free up space",
		s.Name, s.Base, s.BaseCommit, runner.Bytes(size.Bytes), size.Files, runner.Shown(size.Largest), runner.Bytes(size.MaxSize),
		runner.Bytes(int64(min(avail, 1<<62))), dir)
}
