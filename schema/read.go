package schema

import (
	"fmt"
	"io"
	"os"
)

// MaxFileSize is the most asb reads of any file of an outer folder (and of
// its own records): a 40 MB sandbox.yaml took 8 s and 950 MB to validate.
const MaxFileSize = 1 << 20

// TooBigError is a file larger than MaxFileSize.
type TooBigError struct{ Path string }

func (e *TooBigError) Error() string {
	return fmt.Sprintf("%s is larger than %d bytes (1 MiB), the most asb reads of a file: is it the right file?", e.Path, MaxFileSize)
}

// ReadFile reads path, refusing (with a *TooBigError) a file larger than
// MaxFileSize without reading more of it.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFileSize {
		return nil, &TooBigError{Path: path}
	}
	return b, nil
}

// CheckSize refuses content larger than MaxFileSize (content to be checked
// before it is written, named name).
func CheckSize(name string, b []byte) error {
	if len(b) > MaxFileSize {
		return &TooBigError{Path: name}
	}
	return nil
}
