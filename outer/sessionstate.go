package outer

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/agents-sandbox/asb/runner"
)

// SessionState is a session as asb session ls shows it.
type SessionState struct {
	Session
	VMStatus     string    `json:"vm_status"` // msb's status; "none" before the first run
	Ahead        int       `json:"ahead"`     // commits of the branch not on the base
	Behind       int       `json:"behind"`    // commits of the base not on the branch
	LastActivity time.Time `json:"last_activity"`
	Problem      string    `json:"problem,omitempty"` // what could not be read
	// IdleTimeout is when msb stops the VM with no client attached
	// (sandbox.yaml's idle_timeout, which the session's config derives).
	IdleTimeout string `json:"idle_timeout,omitempty"`
}

// SessionTools are what reading and ending a session runs.
type SessionTools struct {
	Git runner.Git
	MSB runner.MSB
}

// baseRef is what a session is compared with: its base branch as it is
// now, or the commit it left when it was branched from a detached HEAD.
func (s Session) baseRef() string {
	if s.Base == "HEAD" {
		return s.BaseCommit
	}
	return s.Base
}

// StateOf brings session s's branch into workspace/ and reads its state.
func StateOf(ctx context.Context, dir string, s Session, t SessionTools) SessionState {
	st := SessionState{Session: s, VMStatus: "none"}
	if vs, err := t.MSB.Status(ctx, s.VM); err != nil {
		st.VMStatus = "unknown"
	} else if vs != "" {
		st.VMStatus = vs
	}
	ws := filepath.Join(dir, WorkspaceDir)
	if fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(s.Paths.Workspace), ".git", "index")); err == nil {
		st.LastActivity = fi.ModTime().UTC().Truncate(time.Second)
	}
	if err := t.Git.SyncSessionBranch(ctx, ws, filepath.Join(dir, filepath.FromSlash(s.Paths.Workspace)), s.Branch); err != nil {
		st.Problem = err.Error()
		return st
	}
	if when, err := t.Git.LastCommit(ctx, ws, "refs/heads/"+s.Branch); err == nil && when.After(st.LastActivity) {
		st.LastActivity = when.UTC()
	}
	var err error
	if st.Ahead, st.Behind, err = t.Git.AheadBehind(ctx, ws, s.baseRef(), "refs/heads/"+s.Branch); err != nil {
		st.Problem = fmt.Sprintf("compare with %s: %v", s.Base, err)
	}
	return st
}

// DiffSession writes what session s's branch changed since it left its
// base, as workspace/ sees it (after bringing the branch there).
func DiffSession(ctx context.Context, dir string, s Session, t SessionTools, stat bool, w interface{ Write([]byte) (int, error) }) error {
	ws := filepath.Join(dir, WorkspaceDir)
	if err := t.Git.SyncSessionBranch(ctx, ws, filepath.Join(dir, filepath.FromSlash(s.Paths.Workspace)), s.Branch); err != nil {
		return err
	}
	return t.Git.DiffTo(ctx, ws, s.baseRef(), "refs/heads/"+s.Branch, stat, w)
}

// UnmergedError is a session whose branch holds commits no other branch
// has: removing it would lose them.
type UnmergedError struct {
	Name, Branch string
	Commits      int
	Dirty        bool
	Why          string
}

func (e *UnmergedError) Error() string {
	what := fmt.Sprintf("%s holds %d commit(s) that no other branch has", e.Branch, e.Commits)
	switch {
	case e.Dirty:
		what = "its checkout has changes that are not committed"
	case e.Why != "":
		what = e.Why
	}
	return fmt.Sprintf("session %s not removed: %s; merge it first (git -C workspace merge %s) or remove it anyway with asb session rm --force %s",
		e.Name, what, e.Branch, e.Name)
}

// RemoveSession ends session s: its VM, its home volume, its checkout and
// record, and its branch in workspace/. Unless force, a branch holding
// commits no other branch has, or a checkout with uncommitted changes, is
// refused (UnmergedError) before anything is removed. The caller holds
// the folder's lock.
func RemoveSession(ctx context.Context, dir string, s Session, t SessionTools, force bool) error {
	ws := filepath.Join(dir, WorkspaceDir)
	co := filepath.Join(dir, filepath.FromSlash(s.Paths.Workspace))
	if !force {
		if err := t.Git.SyncSessionBranch(ctx, ws, co, s.Branch); err != nil {
			return &UnmergedError{Name: s.Name, Branch: s.Branch, Why: err.Error()}
		}
		if dirty, err := t.Git.Dirty(ctx, co); err != nil || dirty {
			return &UnmergedError{Name: s.Name, Branch: s.Branch, Dirty: true}
		}
		n, err := t.Git.Unmerged(ctx, ws, s.Branch)
		if err != nil {
			return fmt.Errorf("count %s's commits: %w", s.Branch, err)
		}
		if n > 0 {
			return &UnmergedError{Name: s.Name, Branch: s.Branch, Commits: n}
		}
	}
	if err := t.MSB.RemoveVM(ctx, s.VM); err != nil {
		return fmt.Errorf("remove the VM %s: %w", s.VM, err)
	}
	if s.HomeVolume != "" {
		if err := t.MSB.RemoveVolume(ctx, s.HomeVolume); err != nil {
			return fmt.Errorf("remove the home volume %s: %w", s.HomeVolume, err)
		}
	}
	if err := RemoveSessionFiles(dir, s); err != nil {
		return err
	}
	if t.Git.HasBranch(ctx, ws, s.Branch) {
		if err := t.Git.DeleteBranch(ctx, ws, s.Branch); err != nil {
			return fmt.Errorf("delete %s in workspace/: %w", s.Branch, err)
		}
	}
	return nil
}
