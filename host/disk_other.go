//go:build !unix

package host

import (
	"errors"
	"runtime"
)

func freeDisk(string) (uint64, error) {
	return 0, errors.New("not supported on " + runtime.GOOS)
}

// DiskUsage is not measured on this system.
func DiskUsage(string) (int64, error) {
	return 0, errors.New("disk usage is not measured on " + runtime.GOOS)
}

// FreeFiles reports no limit on this system.
func FreeFiles(string) (uint64, error) { return 1 << 62, nil }
