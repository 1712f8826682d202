package initcmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/runner"
	"github.com/agents-sandbox/asb/schema"
)

// written is what a run of init did.
type written struct {
	dir     string
	changes []generator.Change
	cleaned []string // staging files of a killed run, removed
	gitInit bool
	origin  *schema.WorkspaceOrigin // what a local --workspace gave, for the report
	// vmOrigin is an origin a re-run read from workspace/.git, which the
	// VM writes, and recorded where the record named none: not approved.
	vmOrigin string
	// finish waits for the git init that runs beside the rest of the run
	// (reapply, approval): when it failed, what this run wrote in the
	// folder is taken back, as when the files failed (an approval recorded
	// meanwhile stays: it is of what the same answers write again).
	finish func() error
}

// write lays down the folder; the caller holds the folder's lock, so no
// other asb writes into it meanwhile, and calls the result's finish. When a
// step after the files fails (the clone's move, git init), what this run
// wrote is taken back, and only that: the files it created or replaced,
// the folders it made, the .git it began.
func (o *Options) write(ctx context.Context, p *prepared, early *pendingGit) (*written, error) {
	w := &written{dir: p.dir}
	if early != nil {
		// The folder is this run's own, made empty for its git init:
		// nothing staged in it, no project around which to refuse.
		return o.lay(ctx, p, w, early, "", nil)
	}
	var err error
	if w.cleaned, err = generator.CleanStaging(p.dir); err != nil {
		return nil, fmt.Errorf("remove the staging files a killed run left: %w", err)
	}
	if why := heldProject(ctx, o.Git, p.dir, p.plan); why != "" {
		return nil, projectError(o, p.dir, why)
	}
	clone, origin, cleanup, err := o.clone(ctx, p.dir)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	// A new repository's git init runs while the files are written: it
	// touches only .git/, and the two together are what the user waits for.
	git, err := o.startGitInit(ctx, p.dir)
	if err != nil {
		return nil, err
	}
	return o.lay(ctx, p, w, git, clone, origin)
}

// lay records the answers and writes the files while git init runs; see
// write.
func (o *Options) lay(ctx context.Context, p *prepared, w *written, git *pendingGit, clone string, origin *schema.WorkspaceOrigin) (*written, error) {
	w.origin = origin
	var err error
	if w.vmOrigin, err = o.record(p, clone, origin); err != nil {
		return nil, git.takeBack(err)
	}
	changes, undo, err := generator.ApplyUndoable(ctx, p.dir, p.plan, generator.WriteOptions{Force: o.Force})
	if err != nil {
		return nil, git.takeBack(err)
	}
	w.changes = changes
	fail := func(cause error) (*written, error) {
		if uerr := undo(); uerr != nil {
			cause = fmt.Errorf("%w (and taking back what this run wrote failed: %v)", cause, uerr)
		}
		return nil, git.takeBack(cause)
	}
	if clone != "" {
		// The clone was made beside the folder (os.Root renames only within
		// one root): it moves in by path, to a direct child of the folder,
		// which no link can be on the way to; a link named workspace is
		// removed itself, never followed.
		ws := filepath.Join(p.dir, "workspace")
		if err := os.Remove(ws); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fail(fmt.Errorf("workspace/: %w", err))
		}
		if err := os.Rename(clone, ws); err != nil {
			return fail(fmt.Errorf("move the clone into workspace/: %w", err))
		}
	}
	// git init (a few ms: a process, and .git's files) goes on while the
	// caller completes and approves the files, which it never reads.
	w.finish = git.finishing(w, fail)
	return w, nil
}

// finishing returns w's finish: it waits for g, and takes back what the
// run wrote (fail) when g failed.
func (g *pendingGit) finishing(w *written, fail func(error) (*written, error)) func() error {
	return func() error {
		if !g.started() {
			return nil
		}
		if err := g.wait(); err != nil {
			_, err = fail(err)
			return err
		}
		w.gitInit = true
		return nil
	}
}

// pendingGit is a git init running beside the writes, and what it made.
type pendingGit struct {
	dir    string
	wait   func() error // its result, once it ended; nil: no git init in this run
	hadGit bool         // a .git that holds history was there before
	made   []string     // folders made for it, deepest last
}

// startGitInit starts git init in dir unless --no-git or dir is a working
// repository already. A .git that git cannot use is what a killed git init
// left when it holds no history (then it is made again), else a repository
// the new git init completes.
func (o *Options) startGitInit(ctx context.Context, dir string) (*pendingGit, error) {
	g := &pendingGit{dir: dir}
	if o.NoGit || o.Git.IsRepo(ctx, dir) {
		return g, nil
	}
	gitDir := filepath.Join(dir, ".git")
	// Any .git that is there is not this run's, whatever it is: a file (a
	// worktree's or a submodule's pointer) or a link is the user's, and
	// never taken back. Only a real folder without history is what a
	// killed git init leaves.
	fi, err := os.Lstat(gitDir)
	if g.hadGit = err == nil; g.hadGit && fi.IsDir() && runner.NoHistory(dir) {
		// What a killed git init left, locks and all: start again.
		if err := os.RemoveAll(gitDir); err != nil {
			return nil, fmt.Errorf("remove the .git a killed git init left: %w", err)
		}
		g.hadGit = false
	}
	if g.made, err = mkdirAllTracked(dir); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- o.Git.Init(ctx, dir) }()
	g.wait = sync.OnceValue(func() error { return <-done })
	return g, nil
}

func (g *pendingGit) started() bool { return g.wait != nil }

// takeBack ends a run that failed: once git init is done, the .git it
// began and the folders made for it go (a folder only when empty: the
// writer's undo has taken back the files by then).
func (g *pendingGit) takeBack(cause error) error {
	if !g.started() {
		return cause
	}
	_ = g.wait()
	if !g.hadGit {
		_ = os.RemoveAll(filepath.Join(g.dir, ".git"))
	}
	for i := len(g.made) - 1; i >= 0; i-- {
		_ = os.Remove(g.made[i])
	}
	return cause
}

// clone makes workspace/ from --workspace beside the target first, so that a
// failed clone writes nothing; a clone a killed run of init into the same
// folder left is removed first (the folder's lock is held: it is no live
// run's). It returns what the record says of where workspace/ comes from.
func (o *Options) clone(ctx context.Context, dir string) (clone string, origin *schema.WorkspaceOrigin, cleanup func(), err error) {
	cleanup = func() {}
	if o.Init.Workspace == "" {
		return "", nil, cleanup, nil
	}
	parent, err := existingParent(dir)
	if err != nil {
		return "", nil, nil, err
	}
	prefix := ".asb-clone-" + filepath.Base(dir) + "-"
	if stale, _ := filepath.Glob(filepath.Join(parent, prefix+"*")); len(stale) > 0 {
		for _, s := range stale {
			_ = os.RemoveAll(s)
		}
	}
	tmp, err := os.MkdirTemp(parent, prefix+"*")
	if err != nil {
		return "", nil, nil, fmt.Errorf("prepare the clone: %w", err)
	}
	cleanup = func() { _ = os.RemoveAll(tmp) }
	clone = filepath.Join(tmp, "workspace")
	if looksLikeURL(o.Init.Workspace) {
		err = o.Git.CloneTyped(ctx, o.Init.Workspace, clone)
	} else {
		origin, err = o.fromLocal(ctx, clone)
	}
	if err != nil {
		cleanup()
		return "", nil, nil, &cloneError{src: o.Init.Workspace, err: err}
	}
	return clone, origin, cleanup, nil
}

// fromLocal makes clone from the folder the user typed: a clone of a git
// checkout (origin: the remote teammates clone, never the local path), or
// a copy of a plain folder. Either is the user's own, so it is read; the
// record says what teammates can get of it.
func (o *Options) fromLocal(ctx context.Context, clone string) (*schema.WorkspaceOrigin, error) {
	src := o.Init.Workspace
	s, err := o.Git.ReadLocal(ctx, src, o.WorkspaceRemote)
	if err != nil {
		return nil, err
	}
	if !s.Repo {
		if o.WorkspaceRemote != "" {
			return nil, fmt.Errorf("--workspace-remote %s: %s is not a git checkout (a folder with .git at its top)", o.WorkspaceRemote, src)
		}
		skipped, err := copyFolder(src, clone)
		if len(skipped) > 0 {
			fmt.Fprintf(o.IO.ErrOut, "asb: not copied into workspace/ (neither a file, a folder nor a link): %s\n", strings.Join(skipped, ", "))
		}
		return &schema.WorkspaceOrigin{Local: schema.LocalFolder}, err
	}
	if err := o.Git.CloneLocal(ctx, src, clone, s.URL); err != nil {
		return nil, err
	}
	origin := &schema.WorkspaceOrigin{URL: s.URL, Branch: s.Branch, Commit: s.Commit}
	if s.URL == "" {
		origin.Local = schema.LocalCheckout
	}
	return origin, nil
}

func checkWorkspaceEmpty(dir string) error {
	entries, err := os.ReadDir(filepath.Join(dir, "workspace"))
	if err == nil && len(entries) > 0 {
		return fmt.Errorf("--workspace: %s already has files; remove it or drop --workspace", filepath.Join(dir, "workspace"))
	}
	return nil
}

func existingParent(dir string) (string, error) {
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		if dirExists(p) {
			return p, nil
		}
		if filepath.Dir(p) == p {
			return "", fmt.Errorf("no existing parent folder for %s", dir)
		}
	}
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// record puts asb.yaml into the plan with what is known only now: asb's
// version, and where workspace/ comes from: what the local folder the
// user typed gave (origin), else the origin of the clone of --workspace or
// of a repository already in workspace/ (only while the record names no
// remote: a recorded one is kept). A path of this machine is never
// recorded as the origin (a teammate's sync would refuse it): that
// workspace is local, not shared, as an earlier record may say already.
// An origin a re-run reads from workspace/.git (the VM's to write) where
// the record named none is returned: recorded, but not approved.
func (o *Options) record(p *prepared, clone string, origin *schema.WorkspaceOrigin) (vmOrigin string, err error) {
	ws := clone
	if ws == "" {
		ws = filepath.Join(p.dir, "workspace")
	}
	rec := &schema.Record{Asb: o.Version}
	old, oldErr := schema.ReadRecord(p.dir)
	switch got, ok := runner.ReadOrigin(ws); {
	case origin != nil:
		rec.Workspace = *origin
	case clone == "" && oldErr == nil && old.Workspace.URL != "":
		// Recorded already: kept. workspace/.git is the VM's to write, and
		// what it says now is not an answer of the user's.
		rec.Workspace = old.Workspace
		if ok && got.URL != old.Workspace.URL {
			fmt.Fprintf(o.IO.ErrOut, "asb: workspace/'s origin is now %s; %s keeps %s (the VM can write workspace/.git): edit %s to change it\n",
				schema.RedactOrigin(got.URL), schema.RecordFile, schema.RedactOrigin(old.Workspace.URL), schema.RecordFile)
		}
	case ok && schema.CheckRecordedOrigin(got.URL) == nil:
		rec.Workspace = got
		if clone == "" && oldErr == nil {
			vmOrigin = got.URL // a re-run: workspace/.git may be the VM's since
		}
	case ok:
		got.URL, got.Local = "", schema.LocalCheckout
		rec.Workspace = got
	default:
		if oldErr == nil && old.Workspace.Local != "" {
			rec.Workspace = old.Workspace // still local: no remote since
		}
	}
	opts := o.Init
	opts.Record = rec
	agent, err := generator.LoadAgent(o.Templates, opts.Agent)
	if err != nil {
		return "", err
	}
	raw, err := schema.MarshalRecord(generator.Record(opts, cmp.Or(opts.AgentVersion, agent.Version)))
	if err != nil {
		return "", err
	}
	p.plan.Put(generator.File{Path: schema.RecordFile, Mode: generator.ModeFile, Content: raw})
	return vmOrigin, nil
}

// mkdirAllTracked makes dir and its missing parents, and returns the ones
// it made, outermost first.
func mkdirAllTracked(dir string) ([]string, error) {
	var missing []string
	for p := dir; !dirExists(p); p = filepath.Dir(p) {
		missing = append([]string{p}, missing...)
		if filepath.Dir(p) == p {
			break
		}
	}
	for i, p := range missing {
		if err := os.Mkdir(p, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			for j := i - 1; j >= 0; j-- {
				_ = os.Remove(missing[j])
			}
			return nil, fmt.Errorf("make %s: %w", p, err)
		}
	}
	return missing, nil
}
