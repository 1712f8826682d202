// Package outer finds the outer folder a command acts on: the folder that
// holds sandbox.yaml, found by walking up from the working directory, or the
// folder given with -d/--dir.
package outer

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agents-sandbox/asb/schema"
)

// Marker is the file that makes a folder an outer folder.
const Marker = "sandbox.yaml"

// NotFoundError says no outer folder was found from Start upwards.
type NotFoundError struct{ Start string }

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("no %s in %s or any folder above it: run asb inside an outer folder, pass -d DIR, or create one with `asb init --agent opencode DIR`", Marker, e.Start)
}

// Find walks up from start (made absolute and cleaned) to the first folder
// holding a regular file named sandbox.yaml and returns that folder.
func Find(start string) (string, error) {
	dir, err := filepath.Abs(start)
	if err != nil {
		return "", fmt.Errorf("find the outer folder: %w", err)
	}
	for p := dir; ; p = filepath.Dir(p) {
		ok, err := holdsMarker(p)
		if err != nil {
			return "", err
		}
		if ok {
			return p, inVMTree(p)
		}
		if filepath.Dir(p) == p {
			return "", &NotFoundError{Start: dir}
		}
	}
}

// inVMTree refuses the folder found when it lies in a tree an outer folder
// above it hands to its VM (its workspace/, a session's checkout): the
// agent writes there, and a sandbox.yaml it wrote would make asb run in
// workspace/ (or below) act on a folder of the agent's: its Taskfile, and
// a secrets.env the VM reads. Only where asb looked for the folder itself;
// -d names one on purpose.
func inVMTree(found string) error {
	for q := filepath.Dir(found); filepath.Dir(q) != q; q = filepath.Dir(q) {
		if ok, err := holdsMarker(q); err != nil || !ok {
			continue
		}
		rel, err := filepath.Rel(q, found)
		if err != nil {
			continue
		}
		rel = filepath.ToSlash(rel)
		top, _, _ := strings.Cut(rel, "/")
		if top == WorkspaceDir || strings.HasPrefix(rel, schema.SessionsDir+"/") {
			return fmt.Errorf("refused: %s holds a %s, but it is inside %s, which the agent's VM writes: asb takes no outer folder from there; run asb in %s, or pass -d %s", found, Marker, filepath.Join(q, top), q, q)
		}
	}
	return nil
}

// Resolve returns the outer folder of a command: dir when it is set
// (relative to wd; it must hold sandbox.yaml itself), else Find(wd).
func Resolve(wd, dir string) (string, error) {
	if dir == "" {
		return Find(wd)
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(wd, dir)
	}
	dir = filepath.Clean(dir)
	ok, err := holdsMarker(dir)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fmt.Errorf("--dir %s holds no %s: give the outer folder (the one `asb init` made)", dir, Marker)
	}
	return dir, nil
}

func holdsMarker(dir string) (bool, error) {
	fi, err := os.Stat(filepath.Join(dir, Marker))
	switch {
	case err == nil:
		return fi.Mode().IsRegular(), nil
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrPermission), isNotDir(err):
		return false, nil
	default:
		return false, fmt.Errorf("find the outer folder: %w", err)
	}
}

func isNotDir(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && errors.Is(pe.Err, errNotDir)
}
