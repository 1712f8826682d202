//go:build !linux && !darwin

package runner

// No SEEK_DATA here: copySparse copies every byte.
const (
	seekData = -1
	seekHole = -1
)
