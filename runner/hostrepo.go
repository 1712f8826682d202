package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agents-sandbox/asb/internal/folderfs"
)

// The host repository of an outer folder (.asb/git) is where asb looks at
// what the VM committed: a bare repository asb makes and whose config asb
// writes whole on every use. Commits of a repository the VM can write come
// into it only by a fetch from a staged copy (Import), into a namespace per
// source, and everything asb shows of them (log, diff, ahead/behind) is
// read there. It is also what the user fetches from, in a checkout of
// their own: git remote add asb <folder>/.asb/git.
const (
	HostRepoDir = ".asb/git"
	// importDir holds the staged copies, one per source.
	importDir    = ".asb/import"
	hostRepoLock = ".asb/git.lock"
)

// Ref namespaces of the host repository: the workspace's branches under
// workspace/ and each session's under its name (what a user's git fetch
// shows as asb/workspace/main and asb/fix-login); what only asb reads is
// under refs/asb/, which the repository does not advertise.
const (
	WorkspaceBranches = "refs/heads/workspace/"
	WorkspaceHeadRef  = "refs/asb/workspace/HEAD"
	WorkspaceTags     = "refs/asb/workspace/tags/"
)

// hostConfig is the host repository's whole config.
const hostConfig = `# asb's host repository (docs/vm-repositories.md): asb writes this file whole on every use.
[core]
	repositoryformatversion = 0
	filemode = true
	bare = true
	logAllRefUpdates = always
	fsmonitor = false
	hooksPath = /dev/null
[gc]
	auto = 0
[maintenance]
	auto = false
[fetch]
	fsckObjects = true
[transfer]
	fsckObjects = true
[receive]
	fsckObjects = true
[uploadpack]
	hideRefs = refs/asb/
	allowAnySHA1InWant = false
`

// HostRepo is an outer folder's host repository, opened.
type HostRepo struct {
	git   Git
	outer string // the outer folder, absolute
	dir   string // the repository, absolute
}

// Dir is the host repository's path: what the user adds as a remote.
func (h *HostRepo) Dir() string { return h.dir }

// OpenHostRepo opens the host repository of the outer folder dir, making it
// when it is missing. One the outer folder's git tracks (committed into a
// clone by whoever pushed it) is refused: its config would be theirs.
func OpenHostRepo(ctx context.Context, git Git, dir string) (*HostRepo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	h := &HostRepo{git: git, outer: abs, dir: filepath.Join(abs, filepath.FromSlash(HostRepoDir))}
	if err := h.refuseTracked(); err != nil {
		return nil, err
	}
	root, err := folderfs.Open(abs)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	if err := root.MkdirAll(".asb", 0o755); err != nil {
		return nil, folderfs.Explain(".asb", err)
	}
	fi, err := root.Lstat(HostRepoDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return h, h.create(root)
	case err != nil:
		return nil, err
	case !fi.IsDir():
		return nil, fmt.Errorf("%s is a link or a file, not asb's host repository: remove it (asb makes it again)", HostRepoDir)
	}
	return h, h.check(root)
}

// refuseTracked refuses a host repository (or staged copy) that the outer
// folder's git tracks: a file under it, or an entry above it (a submodule
// or a link at .asb or .asb/git), read from the index as every reader of
// .asb/ does (folderfs.Local), without running git.
func (h *HostRepo) refuseTracked() error {
	t, err := folderfs.TrackedStateOf(h.outer)
	if err != nil {
		t = &folderfs.Tracked{Unknown: true}
	}
	for _, rel := range []string{HostRepoDir, importDir} {
		if t.Has(rel) {
			return fmt.Errorf("refused: the outer folder's git tracks %s (or what holds it): it came with the clone, from whoever pushed it, and asb's host repository must be asb's own; git rm -r --cached .asb, commit, then remove %s (asb makes it again)", rel, rel)
		}
	}
	return nil
}

// create makes the host repository: its skeleton and config in a new
// folder, renamed into place (a second asb making it meanwhile wins, and
// this one uses it).
func (h *HostRepo) create(root *folderfs.Root) error {
	tmp, err := os.MkdirTemp(filepath.Join(h.outer, ".asb"), "git.new-")
	if err != nil {
		return err
	}
	rel := ".asb/" + filepath.Base(tmp)
	defer root.RemoveAll(rel)
	r, err := root.OpenRoot(rel)
	if err != nil {
		return err
	}
	defer r.Close()
	for _, d := range []string{"objects/info", "objects/pack", "refs/heads", "refs/tags"} {
		if err := r.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := writeReplace(r, "HEAD", []byte("ref: "+WorkspaceBranches+"main\n")); err != nil {
		return err
	}
	if err := writeReplace(r, "config", []byte(hostConfig)); err != nil {
		return err
	}
	if err := root.Rename(rel, HostRepoDir); err != nil {
		if _, serr := root.Lstat(HostRepoDir); serr == nil {
			return h.check(root)
		}
		return fmt.Errorf("make %s: %w", HostRepoDir, err)
	}
	return nil
}

// check checks an existing host repository's shape as that of a repository
// the VM writes (it lies in the outer folder, which a clone brings), and
// writes its config again when it is not asb's.
func (h *HostRepo) check(root *folderfs.Root) error {
	r, err := root.OpenRoot(HostRepoDir)
	if err != nil {
		return folderfs.Explain(HostRepoDir, err)
	}
	defer r.Close()
	shape := func(format string, a ...any) error {
		return &ShapeError{Repo: HostRepoDir, Found: fmt.Sprintf(format, a...) + " (remove " + HostRepoDir + ": asb makes it again, and asb fetch fills it)"}
	}
	if err := checkShape(r, shape); err != nil {
		return err
	}
	return writeReplace(r, "config", []byte(hostConfig))
}

// run runs git in the host repository.
func (h *HostRepo) run(ctx context.Context, r gitRun, args ...string) ([]byte, error) {
	r.dir = h.dir
	return h.git.run(ctx, r, append([]string{"--git-dir=" + h.dir}, args...)...)
}

// output runs git in the host repository and returns its output.
func (h *HostRepo) output(ctx context.Context, args ...string) ([]byte, error) {
	return h.run(ctx, gitRun{}, args...)
}
