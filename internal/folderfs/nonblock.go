package folderfs

import (
	"io/fs"
	"os"
	"slices"
	"strings"
	"syscall"
)

// A tree the VM writes (workspace/, a session's checkout, their .git) can
// hold a FIFO where asb expects a file or a folder: an open of a FIFO waits
// for a writer, which the VM never sends (and, the FIFO unlinked since,
// nothing ever can), so asb would hang there, holding the folder's locks. A
// type read first (Lstat, a directory entry) is no guard: the VM swaps the
// FIFO in between. Every open of such a tree is made with O_NONBLOCK, which
// changes nothing for a file or a folder, and its type checked on the open
// file.

// OpenNoBlock opens name of r to read, not waiting on a FIFO (or a device)
// put in its place.
func OpenNoBlock(r *os.Root, name string) (*os.File, error) {
	return r.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// OpenNoBlock opens rel of the folder to read, not waiting on a FIFO (or
// a device) put in its place.
func (r *Root) OpenNoBlock(rel string) (*os.File, error) { return OpenNoBlock(r.r, name(rel)) }

// NoBlockFS is r.FS() (links followed only inside r) whose opens do not
// wait on a FIFO: for fs.WalkDir and fs.ReadDir over a tree the VM writes.
func NoBlockFS(r *os.Root) fs.FS { return noBlockFS{r} }

type noBlockFS struct{ r *os.Root }

func (f noBlockFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	return OpenNoBlock(f.r, name)
}

func (f noBlockFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	d, err := OpenNoBlock(f.r, name)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	ents, err := d.ReadDir(-1)
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return ents, err
}

func (f noBlockFS) Stat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	return f.r.Stat(name)
}
