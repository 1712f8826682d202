package folderfs

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"syscall"
)

// StagingInfix marks a staging file: .NAME.asb-HEX beside NAME. A write
// stages its content in one and renames it into place; one left by a
// killed write is removed by the next asb command (RemoveStaging).
const StagingInfix = ".asb-"

// CreateTemp makes a new staging file beside rel (mode 0600, whatever the
// target's mode will be: staging files of secrets.env hold its values) and
// returns it with its relative name. The file is locked (flock, exclusive)
// for as long as f stays open, so keep it open until it is renamed into
// place or removed: a locked staging file is a live write's, and no asb
// removes it, whichever lock that asb holds (another `asb task` looking for
// a killed write's files while this one writes its state, say). The kernel
// drops the lock of a killed process, so what it left is removable.
func (r *Root) CreateTemp(rel string) (*os.File, string, error) {
	dir, base := path.Split(rel)
	for range 16 {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, "", err
		}
		tmp := dir + "." + base + StagingInfix + hex.EncodeToString(b[:])
		f, err := r.r.OpenFile(name(tmp), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, "", err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil && !noLocks(err) {
			f.Close()
			_ = r.r.Remove(name(tmp))
			return nil, "", fmt.Errorf("lock %s: %w", tmp, err)
		}
		if linked(f) {
			return f, tmp, nil
		}
		// Between its creation and the lock, a look for a killed write's
		// files took it for one and removed it: stage under a new name.
		f.Close()
	}
	return nil, "", fmt.Errorf("%s: no free staging name", rel)
}

// holds reports whether rel is still the file f.
func (r *Root) holds(rel string, f *os.File) bool {
	a, err := r.r.Lstat(name(rel))
	if err != nil {
		return false
	}
	b, err := f.Stat()
	return err == nil && os.SameFile(a, b)
}

// linked reports whether f still has a name (one fstat, no path walk).
func linked(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return !ok || st.Nlink > 0
}

// RemoveStaging removes the staging file rel when no live write holds it
// (CreateTemp's lock is free: its writer was killed) and reports whether it
// did. One already gone (renamed into place, or removed by another look)
// is not an error.
func (r *Root) RemoveStaging(rel string) (bool, error) {
	f, err := r.r.OpenFile(name(rel), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return false, err
	}
	switch err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); {
	case errors.Is(err, syscall.EWOULDBLOCK):
		return false, nil // a live write's
	case err != nil && !noLocks(err):
		return false, fmt.Errorf("lock %s: %w", rel, err)
	}
	if !r.holds(rel, f) {
		return false, nil // renamed into place meanwhile
	}
	if err := r.r.Remove(name(rel)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	return true, nil
}

// noLocks reports whether err is a file system without flock (some FUSE
// and network ones): there a staging file is written unlocked and a look
// for killed writes' files removes any it finds, as before locks.
func noLocks(err error) bool {
	return errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOLCK) || errors.Is(err, syscall.EINVAL)
}
