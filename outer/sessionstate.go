package outer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"time"

	"github.com/agents-sandbox/asb/internal/folderfs"
	"github.com/agents-sandbox/asb/runner"
	"github.com/agents-sandbox/asb/schema"
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

// SessionStates brings workspace/'s and each session's commits into the
// folder dir's host repository and reads each session's state there. A
// repository that cannot be read is the Problem of the sessions it
// concerns.
func SessionStates(ctx context.Context, dir string, sessions []Session, t SessionTools) []SessionState {
	h, _, werr := importWorkspace(ctx, t.Git, dir)
	out := make([]SessionState, 0, len(sessions))
	for _, s := range sessions {
		st := SessionState{Session: s, VMStatus: "none"}
		if vs, err := t.MSB.Status(ctx, s.VM); err != nil {
			st.VMStatus = "unknown"
		} else if vs != "" {
			st.VMStatus = vs
		}
		st.LastActivity = checkoutActivity(dir, s)
		if h == nil {
			st.Problem = werr.Error()
		} else if err := sessionState(ctx, h, &st); err != nil {
			st.Problem = err.Error()
		} else if werr != nil {
			st.Problem = "compared with the base as last seen: " + werr.Error()
		}
		out = append(out, st)
	}
	return out
}

// sessionState imports s's checkout into h and reads its branch there.
func sessionState(ctx context.Context, h *runner.HostRepo, st *SessionState) error {
	if _, err := h.Import(ctx, SessionSource(st.Session)); err != nil {
		return err
	}
	if when, err := h.LastCommit(ctx, st.HostRef()); err == nil && when.After(st.LastActivity) {
		st.LastActivity = when.UTC()
	}
	var err error
	if st.Ahead, st.Behind, err = h.AheadBehind(ctx, st.baseRev(ctx, h), st.HostRef()); err != nil {
		return fmt.Errorf("compare with %s: %w", st.Base, err)
	}
	return nil
}

// checkoutActivity is when git last wrote session s's index, read as the
// file's time (no git runs in the checkout).
func checkoutActivity(dir string, s Session) time.Time {
	r, err := folderfs.Open(dir)
	if err != nil {
		return time.Time{}
	}
	defer r.Close()
	if fi, err := r.Lstat(s.Paths.Workspace + "/.git/index"); err == nil && fi.Mode().IsRegular() {
		return fi.ModTime().UTC().Truncate(time.Second)
	}
	return time.Time{}
}

// SessionDiff is what session s's branch changed since it left its base,
// as the host repository has it once both are imported.
type SessionDiff struct {
	Host *runner.HostRepo
	Base string // the base's revision in the host repository
	Tip  string // the session's branch there
}

// DiffSession brings workspace/'s and session s's commits into the host
// repository and returns what to compare there.
func DiffSession(ctx context.Context, dir string, s Session, t SessionTools) (*SessionDiff, error) {
	h, _, err := importWorkspace(ctx, t.Git, dir)
	if h == nil {
		return nil, err // the host repository could not be opened
	}
	if _, err := h.Import(ctx, SessionSource(s)); err != nil {
		return nil, err
	}
	return &SessionDiff{Host: h, Base: s.baseRev(ctx, h), Tip: s.HostRef()}, nil
}

// Write writes the diff (or its --stat) to w.
func (d *SessionDiff) Write(ctx context.Context, stat bool, w io.Writer) error {
	return d.Host.DiffTo(ctx, d.Base, d.Tip, stat, w)
}

// Files lists the paths the session's branch changed, and those of them
// that tools on the host run or obey (table, matched at any depth).
func (d *SessionDiff) Files(ctx context.Context, branch string, table schema.HostRunTable) (files []string, hostRun []HostRunFile, err error) {
	if files, err = d.Host.ChangedFiles(ctx, d.Base, d.Tip); err != nil {
		return nil, nil, err
	}
	for _, f := range files {
		if e, ok := table.Match(f, true); ok {
			hostRun = append(hostRun, HostRunFile{Branch: branch, Path: f, Why: e.Why})
		}
	}
	return files, hostRun, nil
}

// UnmergedError is a session whose branch holds commits no other branch
// has, or whose checkout has work not committed, or that asb could not
// check: removing it could lose them.
type UnmergedError struct {
	Name, Branch string
	Commits      int
	Dirty        bool
	Why          string // what else keeps it
	Take         string // what to do about Why ("": take the commits)
	Stopped      string // the VM asb stopped to read the checkout
}

func (e *UnmergedError) Error() string {
	force := "asb session rm --force " + e.Name
	take := fmt.Sprintf("take them first (in a checkout of your own: git fetch asb && git merge asb/%s; asb fetch says more)", e.Name)
	var why string
	switch {
	case e.Dirty:
		why = fmt.Sprintf("its checkout has changes that are not committed; commit them in its VM first (asb task vm:shell --session %s) and take the branch, or remove it anyway with %s", e.Name, force)
	case e.Why != "":
		if e.Take != "" {
			take = e.Take
		}
		why = fmt.Sprintf("%s; %s, or remove it anyway with %s", e.Why, take, force)
	default:
		// A merge in the user's own clone never reaches the host
		// repository: once the commits are taken, --force is the way.
		why = fmt.Sprintf("%s holds %d commit(s) that no other branch has; %s, then remove it with %s (asb does not see your checkout)",
			e.Branch, e.Commits, take, force)
	}
	msg := fmt.Sprintf("session %s not removed: %s", e.Name, why)
	if e.Stopped != "" {
		msg += fmt.Sprintf(" (its VM %s is stopped now: asb stopped it to read the checkout with nothing writing it)", e.Stopped)
	}
	return msg
}

// RemoveSession ends session s: its VM, its home volume, its checkout and
// record, and its refs in the host repository. Unless force, a branch
// holding commits no other ref of the host repository has, or a checkout
// with uncommitted changes, is refused (UnmergedError) before anything is
// removed; to read the checkout, a VM that runs is stopped first. The
// caller holds the folder's lock.
func RemoveSession(ctx context.Context, dir string, s Session, t SessionTools, force bool) error {
	h, err := runner.OpenHostRepo(ctx, t.Git, dir)
	if err != nil && !force {
		return err
	}
	if !force {
		if err := keepsNothing(ctx, dir, h, s, t); err != nil {
			return err
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
	if h != nil {
		head, base := sessionRefs(s.Name)
		if err := h.Forget(ctx, SessionSource(s), s.HostRef(), head, base); err != nil {
			return fmt.Errorf("delete %s in %s: %w", s.Name, runner.HostRepoDir, err)
		}
	}
	return nil
}

// keepsNothing refuses to remove s while its checkout has work that is
// not committed, or its branch commits that no other ref holds. The
// checkout is read with nothing writing it (runner.HostRepo.Dirty: what
// the VM planted there for the host's git is refused first, which holds
// only while the VM is stopped): a VM that runs is stopped, unless its
// branch alone keeps the session (then it runs on, and an agent attached
// to it too).
func keepsNothing(ctx context.Context, dir string, h *runner.HostRepo, s Session, t SessionTools) error {
	status, err := t.MSB.Status(ctx, s.VM)
	if err != nil {
		return &UnmergedError{Name: s.Name, Branch: s.Branch,
			Why:  fmt.Sprintf("msb cannot say whether its VM %s runs (%v), and asb reads the checkout only with nothing writing it", s.VM, err),
			Take: "see that msb works (asb doctor) and try again"}
	}
	// workspace/'s branches as they are now hold what was merged there (a
	// repository that cannot be read holds nothing: the count errs on the
	// side of keeping the session).
	_, _, _ = importWorkspace(ctx, t.Git, dir)
	if status == "" || status == "Stopped" || status == "Crashed" { // no VM process: nothing writes
		return checkoutKept(ctx, dir, h, s)
	}
	if err := branchKept(ctx, h, s); err != nil {
		return err
	}
	if err := t.MSB.Stop(ctx, s.VM); err != nil {
		return &UnmergedError{Name: s.Name, Branch: s.Branch,
			Why:  fmt.Sprintf("its VM %s (%s) could not be stopped (%v), and asb reads the checkout only with nothing writing it", s.VM, status, err),
			Take: fmt.Sprintf("stop it (msb stop %s; one that does not stop, by force: %s) and try again", s.VM, runner.ForceStop(s.VM))}
	}
	// Read again: the VM may have committed since.
	err = checkoutKept(ctx, dir, h, s)
	var ue *UnmergedError
	if errors.As(err, &ue) {
		ue.Stopped = s.VM
	} else if err != nil {
		err = fmt.Errorf("%w (its VM %s is stopped now: asb stopped it to read the checkout)", err, s.VM)
	}
	return err
}

// branchKept imports s's checkout and refuses while its branch holds
// commits no other ref has.
func branchKept(ctx context.Context, h *runner.HostRepo, s Session) error {
	if err := importSession(ctx, h, s); err != nil {
		return err
	}
	return unmerged(ctx, h, s)
}

// checkoutKept imports s's checkout and refuses while it has work not
// committed (asb's check refusing it counts so), or its branch commits no
// other ref has. s's VM does not run.
func checkoutKept(ctx context.Context, dir string, h *runner.HostRepo, s Session) error {
	if err := importSession(ctx, h, s); err != nil {
		return err
	}
	head, _ := sessionRefs(s.Name)
	co := filepath.Join(dir, filepath.FromSlash(s.Paths.Workspace))
	dirty, err := h.Dirty(ctx, co, head)
	var we *runner.WorkTreeError
	switch {
	case errors.As(err, &we):
		p := path.Join(s.Paths.Workspace, we.Path)
		return &UnmergedError{Name: s.Name, Branch: s.Branch,
			Why:  "asb cannot check its checkout for changes not committed: " + we.Error(),
			Take: fmt.Sprintf("look at %s and remove it, then try again", p)}
	case err != nil || len(dirty) > 0:
		return &UnmergedError{Name: s.Name, Branch: s.Branch, Dirty: true}
	}
	return unmerged(ctx, h, s)
}

// importSession brings s's commits into h; a checkout that cannot be
// imported, or whose HEAD cannot be read, keeps the session.
func importSession(ctx context.Context, h *runner.HostRepo, s Session) error {
	imp, err := h.Import(ctx, SessionSource(s))
	if err != nil {
		return &UnmergedError{Name: s.Name, Branch: s.Branch, Why: err.Error()}
	}
	if imp.HeadErr != nil {
		return &UnmergedError{Name: s.Name, Branch: s.Branch, Why: "its checkout's HEAD cannot be read (" + imp.HeadErr.Error() + ")"}
	}
	return nil
}

// unmerged refuses while s's branch holds commits no other ref has.
func unmerged(ctx context.Context, h *runner.HostRepo, s Session) error {
	head, base := sessionRefs(s.Name)
	n, err := h.Unmerged(ctx, s.HostRef(), head, base)
	if err != nil {
		return fmt.Errorf("count %s's commits: %w", s.Branch, err)
	}
	if n > 0 {
		return &UnmergedError{Name: s.Name, Branch: s.Branch, Commits: n}
	}
	return nil
}
