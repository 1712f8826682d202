//go:build !unix

package host

import (
	"errors"
	"runtime"
)

func freeDisk(string) (uint64, error) {
	return 0, errors.New("not supported on " + runtime.GOOS)
}
