//go:build unix

package host

import (
	"errors"
	"io/fs"
	"path/filepath"
	"syscall"
)

// DiskUsage is what `du -sB1 path` reports: the bytes allocated to every
// file under path (symlinks not followed, a hard-linked file counted
// once). A missing path uses nothing.
func DiskUsage(path string) (int64, error) {
	seen := map[[2]uint64]bool{}
	var total int64
	err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		info, err := d.Info()
		if err != nil {
			return nil //nolint:nilerr // removed while walking
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		if !ok {
			total += info.Size()
			return nil
		}
		key := [2]uint64{uint64(st.Dev), st.Ino} //nolint:unconvert // Dev's type differs per OS
		if st.Nlink > 1 {
			if seen[key] {
				return nil
			}
			seen[key] = true
		}
		total += st.Blocks * 512
		return nil
	})
	return total, err
}
