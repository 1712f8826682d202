// Package folderfs is the outer folder as one confined root. Every write,
// rename and removal asb makes in an outer folder (and the reads of its
// files) goes through a Root, which is Go's os.Root: a path may run through
// a link that stays inside the folder, and one that leads out of it (a
// committed `.asb-base -> /home/you`, a `toolchain/certs -> /etc`) is
// refused with an error instead of followed. A cloned folder is input from
// whoever can push to it; this is what keeps its links from steering asb's
// writes onto the rest of the machine.
package folderfs

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Root is an outer folder opened as a confined root.
type Root struct {
	dir string
	r   *os.Root
}

// Open opens the folder dir (which must exist) as a confined root. dir
// itself may be reached through links (it is what the user typed); below it
// nothing leaves it. A folder whose own folders (OwnFolders) are links is
// refused (*OwnLinkError).
func Open(dir string) (*Root, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	r, err := os.OpenRoot(abs)
	if err != nil {
		return nil, err
	}
	if err := checkOwn(r); err != nil {
		_ = r.Close()
		return nil, err
	}
	return &Root{dir: abs, r: r}, nil
}

// Dir is the folder's absolute path.
func (r *Root) Dir() string { return r.dir }

// Close releases the root.
func (r *Root) Close() error { return r.r.Close() }

// Rel returns p relative to the folder, in the form the methods take
// (slash-separated), for an absolute path under the folder or a relative
// one. A path that leaves the folder is an error.
func (r *Root) Rel(p string) (string, error) {
	if filepath.IsAbs(p) {
		rel, err := filepath.Rel(r.dir, p)
		if err != nil {
			return "", err
		}
		p = rel
	}
	p = filepath.ToSlash(filepath.Clean(p))
	if p == ".." || strings.HasPrefix(p, "../") || path.IsAbs(p) {
		return "", fmt.Errorf("%s is outside the outer folder %s", p, r.dir)
	}
	return p, nil
}

// name is rel in the OS's form, as os.Root takes it.
func name(rel string) string { return filepath.FromSlash(rel) }

// Lstat describes rel without following a last link.
func (r *Root) Lstat(rel string) (fs.FileInfo, error) { return r.r.Lstat(name(rel)) }

// Readlink is the target of the link rel, as written (nothing followed).
func (r *Root) Readlink(rel string) (string, error) { return r.r.Readlink(name(rel)) }

// Stat describes rel, following links that stay inside the folder.
func (r *Root) Stat(rel string) (fs.FileInfo, error) { return r.r.Stat(name(rel)) }

// ReadFile reads rel, refusing more than limit bytes (limit <= 0: no limit).
func (r *Root) ReadFile(rel string, limit int64) ([]byte, error) {
	f, err := r.r.Open(name(rel))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if limit <= 0 {
		return io.ReadAll(f)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, &TooBigError{Path: rel, Limit: limit}
	}
	return b, nil
}

// TooBigError is a file larger than the reader's limit.
type TooBigError struct {
	Path  string
	Limit int64
}

func (e *TooBigError) Error() string {
	return fmt.Sprintf("%s is larger than %d bytes: that is not a file asb wrote", e.Path, e.Limit)
}

// OpenFile opens rel as os.OpenFile does.
func (r *Root) OpenFile(rel string, flag int, perm fs.FileMode) (*os.File, error) {
	return r.r.OpenFile(name(rel), flag, perm)
}

// Mkdir makes the folder rel.
func (r *Root) Mkdir(rel string, perm fs.FileMode) error { return r.r.Mkdir(name(rel), perm) }

// MkdirAll makes rel and the folders above it that are missing.
func (r *Root) MkdirAll(rel string, perm fs.FileMode) error {
	if rel == "." || rel == "" {
		return nil
	}
	return r.r.MkdirAll(name(rel), perm)
}

// Remove removes the file, link or empty folder rel (a link itself, never
// what it points to).
func (r *Root) Remove(rel string) error { return r.r.Remove(name(rel)) }

// RemoveAll removes rel and everything under it, inside the folder only.
func (r *Root) RemoveAll(rel string) error { return r.r.RemoveAll(name(rel)) }

// Rename moves from to to, both inside the folder.
func (r *Root) Rename(from, to string) error { return r.r.Rename(name(from), name(to)) }

// Chmod sets rel's mode.
func (r *Root) Chmod(rel string, mode fs.FileMode) error { return r.r.Chmod(name(rel), mode) }

// OpenRoot opens the folder rel as a root of its own, confined to it.
func (r *Root) OpenRoot(rel string) (*os.Root, error) { return r.r.OpenRoot(name(rel)) }

// FS is the folder as an fs.FS (for fs.WalkDir and fs.ReadDir), confined
// like the rest.
func (r *Root) FS() fs.FS { return r.r.FS() }

// SyncDir flushes the folder rel's entries to disk (best effort: not every
// file system syncs folders).
func (r *Root) SyncDir(rel string) {
	d, err := r.r.Open(name(cleanDir(rel)))
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}

func cleanDir(rel string) string {
	if rel == "" {
		return "."
	}
	return rel
}

// IsEscape reports whether err is os.Root refusing a path that leaves the
// folder (through "..", an absolute link or a link that points out).
func IsEscape(err error) bool {
	return err != nil && strings.Contains(err.Error(), "path escapes from parent")
}

// Explain rewrites os.Root's refusal of rel, a path through a link out of
// the folder, into what it means and what to do; other errors pass.
func Explain(rel string, err error) error {
	if IsEscape(err) {
		return &EscapeError{Path: rel, Err: err}
	}
	return err
}

// EscapeError is a path of the outer folder that leads out of it through a
// link: asb refused to follow it.
type EscapeError struct {
	Path string
	Err  error
}

func (e *EscapeError) Error() string {
	return fmt.Sprintf("refused: %s leads out of the outer folder through a link, and asb reads and writes only inside it; remove the link (git ls-files -s shows a committed one: mode 120000)", e.Path)
}

func (e *EscapeError) Unwrap() error { return e.Err }
