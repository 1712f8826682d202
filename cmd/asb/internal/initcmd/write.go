package initcmd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/schema"
)

// written is what a run of init did.
type written struct {
	dir     string
	changes []generator.Change
	cleaned []string // staging files of a killed run, removed
	gitInit bool
}

// write lays down the folder; the caller holds the folder's lock, so no
// other asb writes into it meanwhile. When a step after the files fails
// (the clone's move, git init), what this run wrote is taken back, and
// only that: the files it created or replaced, the folders it made, the
// .git it began.
func (o *Options) write(ctx context.Context, p *prepared) (*written, error) {
	w := &written{dir: p.dir}
	var err error
	if w.cleaned, err = generator.CleanStaging(p.dir); err != nil {
		return nil, fmt.Errorf("remove the staging files a killed run left: %w", err)
	}
	if why := heldProject(ctx, o.Git, p.dir, p.plan); why != "" {
		return nil, projectError(o, p.dir, why)
	}
	clone, cleanup, err := o.clone(ctx, p.dir)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	if err := o.record(ctx, p, clone); err != nil {
		return nil, err
	}
	changes, undo, err := generator.ApplyUndoable(ctx, p.dir, p.plan, generator.WriteOptions{Force: o.Force})
	if err != nil {
		return nil, err
	}
	w.changes = changes
	hadGit := dirExists(filepath.Join(p.dir, ".git"))
	fail := func(cause error) (*written, error) {
		if !hadGit {
			_ = os.RemoveAll(filepath.Join(p.dir, ".git"))
		}
		if uerr := undo(); uerr != nil {
			return nil, fmt.Errorf("%w (and taking back what this run wrote failed: %v)", cause, uerr)
		}
		return nil, cause
	}
	if clone != "" {
		ws := filepath.Join(p.dir, "workspace")
		if err := os.Remove(ws); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fail(fmt.Errorf("workspace/: %w", err))
		}
		if err := os.Rename(clone, ws); err != nil {
			return fail(fmt.Errorf("move the clone into workspace/: %w", err))
		}
	}
	// A .git that git cannot use (a git init that was killed) is completed
	// by a new git init; a working repository is left as it is.
	if !o.NoGit && !o.Git.IsRepo(ctx, p.dir) {
		if err := o.Git.Init(ctx, p.dir); err != nil {
			return fail(err)
		}
		w.gitInit = true
	}
	return w, nil
}

// clone clones --workspace beside the target first, so that a failed clone
// writes nothing; a clone a killed run of init into the same folder left
// is removed first (the folder's lock is held: it is no live run's).
func (o *Options) clone(ctx context.Context, dir string) (clone string, cleanup func(), err error) {
	if o.Init.Workspace == "" {
		return "", func() {}, nil
	}
	parent, err := existingParent(dir)
	if err != nil {
		return "", nil, err
	}
	prefix := ".asb-clone-" + filepath.Base(dir) + "-"
	if stale, _ := filepath.Glob(filepath.Join(parent, prefix+"*")); len(stale) > 0 {
		for _, s := range stale {
			_ = os.RemoveAll(s)
		}
	}
	tmp, err := os.MkdirTemp(parent, prefix+"*")
	if err != nil {
		return "", nil, fmt.Errorf("prepare the clone: %w", err)
	}
	cleanup = func() { _ = os.RemoveAll(tmp) }
	clone = filepath.Join(tmp, "workspace")
	if err := o.Git.Clone(ctx, o.Init.Workspace, clone); err != nil {
		cleanup()
		return "", nil, &cloneError{src: o.Init.Workspace, err: err}
	}
	return clone, cleanup, nil
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
// version, and where workspace/ comes from (the clone of --workspace, or a
// repository already in workspace/).
func (o *Options) record(ctx context.Context, p *prepared, clone string) error {
	ws := clone
	if ws == "" {
		ws = filepath.Join(p.dir, "workspace")
	}
	rec := &schema.Record{Asb: o.Version}
	if origin, ok := o.Git.Origin(ctx, ws); ok {
		rec.Workspace = origin
	}
	opts := o.Init
	opts.Record = rec
	agent, err := generator.LoadAgent(o.Templates, opts.Agent)
	if err != nil {
		return err
	}
	raw, err := schema.MarshalRecord(generator.Record(opts, cmpOr(opts.AgentVersion, agent.Version)))
	if err != nil {
		return err
	}
	p.plan.Put(generator.File{Path: schema.RecordFile, Mode: generator.ModeFile, Content: raw})
	return nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
