package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/agents-sandbox/asb/internal/folderfs"
)

// ShapeError is a repository the VM can write whose .git is not the plain
// folder asb reads: a gitdir: file, a commondir, alternates, a link. Each
// would make whatever reads it read another repository of the host.
type ShapeError struct {
	Repo  string // as the user knows it: workspace/.git
	Found string // what was found, and where
}

func (e *ShapeError) Error() string {
	return fmt.Sprintf("%s is refused: %s. A repository the VM can write must be a plain .git folder (no gitdir: file, commondir, alternates or links), or it could point asb at another repository of this machine; see docs/vm-repositories.md. Fix it in the VM (or remove it and clone again)", e.Repo, e.Found)
}

// OpenGitDir checks the shape of the repository of the checkout at dir
// (a folder the VM can write) without following a link, and opens its .git
// as a root, which no later read can leave: a link the VM puts there after
// the check is not followed out of it either. name is how messages call
// the repository.
func OpenGitDir(dir, name string) (*os.Root, error) {
	top, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer top.Close()
	shape := func(format string, a ...any) error { return &ShapeError{Repo: name, Found: fmt.Sprintf(format, a...)} }
	fi, err := top.Lstat(".git")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s is not a git repository (no .git)", path.Dir(name))
	case err != nil:
		return nil, err
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, shape(".git is a link")
	case !fi.IsDir():
		return nil, shape(".git is a file (a gitdir: file names another repository's folder)")
	}
	root, err := top.OpenRoot(".git")
	if err != nil {
		return nil, err
	}
	if err := checkShape(root, shape); err != nil {
		root.Close()
		return nil, err
	}
	return root, nil
}

// checkShape is OpenGitDir's look inside .git.
func checkShape(root *os.Root, shape func(string, ...any) error) error {
	for _, name := range []string{"commondir", "objects/info/alternates", "objects/info/http-alternates"} {
		if _, err := root.Lstat(name); err == nil {
			return shape("it has %s (which makes git read another repository's objects or refs)", name)
		}
	}
	for _, name := range []string{"objects", "refs"} {
		fi, err := root.Lstat(name)
		switch {
		case err != nil:
			return shape("it has no %s folder", name)
		case !fi.IsDir():
			return shape("%s is a link or a file, not a folder", name)
		}
	}
	for _, name := range []string{"HEAD", "packed-refs", "shallow", "config"} {
		if fi, err := root.Lstat(name); err == nil && !fi.Mode().IsRegular() {
			return shape("%s is a link or not a plain file", name)
		}
	}
	for _, top := range []string{"refs", "objects"} {
		err := fs.WalkDir(folderfs.NoBlockFS(root), top, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.Type()&fs.ModeSymlink != 0 {
				return shape("%s is a link", p)
			}
			if d.IsDir() && tooDeep(p) {
				return fs.SkipDir
			}
			return nil
		})
		if err != nil {
			var se *ShapeError
			if errors.As(err, &se) {
				return err
			}
			return shape("%s cannot be read: %v", top, err)
		}
	}
	return nil
}

// tooDeep reports whether the folder p of a .git (refs/…, objects/…) is
// below anything git reads there: a ref's name is at most 1024 bytes
// (ValidRefName), and objects/ has folders one deep (XX, pack, info). Each
// open of an os.Root walks its path again from the top, so a chain of n
// folders the VM nests costs a walk n²/2 opens: the walks stop there.
func tooDeep(p string) bool {
	if rest, ok := strings.CutPrefix(p, "objects/"); ok {
		return strings.Contains(rest, "/")
	}
	return len(p) > maxRefName
}
