package outer

import (
	"context"
	"fmt"

	"github.com/agents-sandbox/asb/runner"
)

// Room is the free space of a file system: bytes, and files (inodes; a
// file system that makes them as needed reports none as a limit).
type Room struct {
	Bytes func(path string) (uint64, error)
	Files func(path string) (uint64, error) // nil: no limit on files
}

// checkoutFits refuses a session whose base would fill the disk. The base
// is commonly a branch the VM committed to: a blob of zeros is a few
// kilobytes in the VM's repository and its whole size in the checkout
// asb session new writes on the host, and a tree of a million empty files
// is small too. What checking out the base writes may take at most half
// the free bytes, and half the free files, of the folder's file system.
// room.Bytes nil checks nothing.
func checkoutFits(ctx context.Context, dir string, h *runner.HostRepo, s Session, room Room) error {
	if room.Bytes == nil {
		return nil
	}
	bytes, err := room.Bytes(dir)
	if err != nil {
		return nil // no figure to judge by: msb's own disk checks remain
	}
	files := uint64(1 << 62)
	if room.Files != nil {
		if n, err := room.Files(dir); err == nil {
			files = n
		}
	}
	size, err := h.TreeSize(ctx, s.BaseCommit)
	if err != nil {
		return fmt.Errorf("session %s: %w", s.Name, err)
	}
	return judgeCheckout(dir, s, size, bytes, files)
}

// judgeCheckout says why a checkout of size does not fit in the free
// bytes and files of dir's file system; the message names the largest
// file, so a commit the user did not expect is found.
func judgeCheckout(dir string, s Session, size runner.TreeSize, bytes, files uint64) error {
	var what string
	switch {
	case uint64(size.Bytes) > bytes/2:
		what = fmt.Sprintf("more than half of the %s free", runner.Bytes(int64(min(bytes, 1<<62))))
	case uint64(size.Files) > files/2:
		what = fmt.Sprintf("more files than half of the %d the file system can still make", files)
	default:
		return nil
	}
	return fmt.Errorf("session %s not made: its base %s (commit %.12s) writes out %s in %d files (the largest, %s, %s), %s on the disk of %s; "+
		"a commit made in the VM can be small in its repository and huge written out: look at it in a checkout of your own first (asb fetch says how), or free up space",
		s.Name, s.Base, s.BaseCommit, runner.Bytes(size.Bytes), size.Files, runner.Shown(size.Largest), runner.Bytes(size.MaxSize), what, dir)
}
