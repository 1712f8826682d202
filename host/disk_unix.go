//go:build unix

package host

import (
	"math"
	"syscall"
)

// freeDisk returns the bytes available to an unprivileged user on the file
// system holding path.
func freeDisk(path string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, err
	}
	return uint64(st.Bavail) * uint64(st.Bsize), nil //nolint:unconvert // field types differ per OS
}

// FreeFiles returns the files (inodes) an unprivileged user can still make
// on the file system holding path; one that makes them as needed (btrfs)
// reports no limit.
func FreeFiles(path string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, err
	}
	if st.Files == 0 {
		return math.MaxUint64, nil
	}
	return uint64(st.Ffree), nil //nolint:unconvert // field types differ per OS
}
