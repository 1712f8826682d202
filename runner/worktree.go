package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/agents-sandbox/asb/internal/folderfs"
)

// A session's checkout is the work tree of the one git asb runs on a tree
// the VM writes (HostRepo.Dirty, session rm's check of work not committed).

// Modes of a tree's entries, as git ls-tree shows them.
const (
	modeGitlink = "160000"
)

// treeModes maps each path of rev's tree (files, links, submodules; at any
// depth) to its mode.
type treeModes map[string]string

// treeModes lists rev's tree, read in the host repository.
func (h *HostRepo) treeModes(ctx context.Context, rev string) (treeModes, error) {
	modes := treeModes{}
	err := h.lsTree(ctx, rev, false, func(e treeEntry) error {
		modes[e.Path] = e.Mode
		return nil
	})
	if err != nil {
		return nil, err
	}
	return modes, nil
}

// gitlinks are the paths of the tree's submodules, sorted.
func (t treeModes) gitlinks() []string {
	var out []string
	for p, mode := range t {
		if mode == modeGitlink {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// What git reads of a checkout when it is the work tree: every folder's
// entries, and whole: each tracked file (the new index knows no file's
// stat, so refresh hashes each one), each .gitignore and .gitattributes.
// Where it finds a folder that is no repository of the index's, it looks
// for a repository there through its .git, following a link or a gitdir:
// file (and a commondir link in it) wherever they lead. git opens all this
// without O_NONBLOCK, and older git (before 2.32) follows a .gitignore or
// .gitattributes that is a link. So before git runs, with the VM stopped
// (nothing writes the checkout meanwhile), asb walks the checkout and
// refuses what would make git wait for ever (a FIFO, a socket, a device:
// its open waits for the other end), read outside the checkout (a link git
// follows there), or read for hours (a sparse file costs the VM nothing; a
// chain of folders costs n²/2 lookups to walk). The checkout's own .git is
// not git's repository here (the import reads it, through an os.Root), and
// a submodule is not entered (Dirty): the walk skips both.

// Limits of what git may be given to read (variables: tests lower them).
var (
	// maxWorkTreeDepth is how deep the checkout's folders may nest; no
	// project nests this deep.
	maxWorkTreeDepth = 128
	// maxWorkTreeBytes bounds what git reads whole: tracked files,
	// .gitignore and .gitattributes files, all added up.
	maxWorkTreeBytes int64 = 4 << 30
)

// WorkTreeError is a checkout asb does not give git to read: the path,
// and why.
type WorkTreeError struct {
	Path string // in the checkout, with slashes
	Why  string
}

func (e *WorkTreeError) Error() string { return e.Path + " " + e.Why }

// checkWorkTree walks the checkout at dir (a folder the VM writes, not
// written meanwhile) as git would read it with tree's index, and refuses
// (WorkTreeError) what git would wait on, follow out of it, or take hours
// to read.
func checkWorkTree(dir string, tree treeModes) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	var read int64
	return fs.WalkDir(folderfs.NoBlockFS(root), ".", func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return &WorkTreeError{Path: p, Why: fmt.Sprintf("cannot be read (%v), so what is not committed there cannot be told", cause(err))}
		case p == ".":
			return nil
		case p == ".git" || tree[p] == modeGitlink:
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		n, err := judgeEntry(p, d, tree)
		if read += n; err == nil && read > maxWorkTreeBytes {
			err = &WorkTreeError{Path: p, Why: fmt.Sprintf("takes what git reads whole (tracked files, .gitignore and .gitattributes files) past %d MiB: it would take long (a sparse file costs the VM nothing)", maxWorkTreeBytes>>20)}
		}
		return err
	})
}

// judgeEntry is checkWorkTree's look at one entry (not a submodule's, not
// the top .git): an error for what git must not be given, and otherwise
// how many bytes git reads of it whole.
func judgeEntry(p string, d fs.DirEntry, tree treeModes) (int64, error) {
	name := path.Base(p)
	inDotGit := strings.Contains("/"+path.Dir(p)+"/", "/.git/")
	refuse := func(why string) (int64, error) { return 0, &WorkTreeError{Path: p, Why: why} }
	switch t := d.Type(); {
	case t.IsDir():
		if strings.Count(p, "/") >= maxWorkTreeDepth {
			return refuse(fmt.Sprintf("is a folder nested more than %d deep", maxWorkTreeDepth))
		}
	case t&fs.ModeSymlink != 0:
		switch {
		case name == ".git" || inDotGit:
			return refuse("is a link in a repository's place: git follows it, wherever it leads, when it looks for a repository there")
		case name == ".gitignore" || name == ".gitattributes":
			return refuse("is a link: git before 2.32 reads what it leads to, wherever that is")
		}
	case t.IsRegular():
		if name == ".git" {
			return refuse("is a gitdir: file: git follows it, wherever it leads, when it looks for a repository there")
		}
		if strings.HasPrefix(tree[p], "100") || name == ".gitignore" || name == ".gitattributes" {
			fi, err := d.Info()
			if err != nil {
				return refuse(fmt.Sprintf("cannot be read (%v)", cause(err)))
			}
			return fi.Size(), nil
		}
	default:
		return refuse("is " + fileKind(t) + ", not a file, folder or link: git may wait for ever opening it")
	}
	return 0, nil
}

// fileKind names a type of file that is not a file, folder or link.
func fileKind(t fs.FileMode) string {
	switch {
	case t&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a file, folder or link"
}

// cause is err without the path a PathError adds.
func cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
