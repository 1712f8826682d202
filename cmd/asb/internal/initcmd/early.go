package initcmd

import (
	"context"
	"os"

	"github.com/agents-sandbox/asb/runner"
)

// early is what a run of init into a folder that does not exist yet
// begins before the render and the checks: the folder's lock, and git init
// in the new folder. git init is the longest part of such a run (5 to 9 ms
// on the development machine, against about 2 for the render and the
// checks, docs/startup.md); begun first, it runs beside them and the
// writes. A check that then fails takes it back (abandon).
type early struct {
	lock *runner.Lock
	git  *pendingGit // nil: another run made the folder while this one waited
}

// startEarly takes the folder's lock and starts git init when the run is
// to make a new folder and a new repository in it: not a dry run, no
// --no-git, no --workspace (its clone comes first), an --agent, and no
// folder at the path yet. Otherwise it returns nil, and the run takes its
// lock after the checks, as it always did.
func (o *Options) startEarly(ctx context.Context) (*early, error) {
	if o.DryRun || o.NoGit || o.Init.Agent == "" || o.Init.Workspace != "" {
		return nil, nil
	}
	dir, err := o.absDir()
	if err != nil || exists(dir) {
		return nil, nil //nolint:nilerr // the checks say what is wrong with the path
	}
	lock, err := runner.LockFolder(ctx, dir, "asb init", o.IO.ErrOut)
	if err != nil {
		return nil, err
	}
	e := &early{lock: lock}
	if exists(dir) { // made by another run while this one waited for the lock
		return e, nil
	}
	if e.git, err = o.startGitInit(ctx, dir); err != nil {
		lock.Release()
		return nil, err
	}
	return e, nil
}

// pending is the git init e began, nil when it began none.
func (e *early) pending() *pendingGit {
	if e == nil {
		return nil
	}
	return e.git
}

// abandon ends a run that failed before its writes: the git init e began
// is waited for and taken back with the folders made for it, and the lock
// released.
func (e *early) abandon(cause error) error {
	if e == nil {
		return cause
	}
	if e.git != nil {
		cause = e.git.takeBack(cause)
	}
	e.lock.Release()
	return cause
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
