package outer

import (
	"context"
	"regexp"
	"sync"

	"github.com/agents-sandbox/asb/runner"
)

// The repositories the VM can write (workspace/.git, each session's
// checkout) are untrusted remotes of the folder's host repository
// (runner.HostRepo, .asb/git): their commits come in by HostRepo.Import,
// and every look at them happens there (docs/vm-repositories.md).

// HostRef is session s's branch in the host repository: its name (what a
// user's git fetch of the host repository shows as asb/NAME). In its
// checkout the branch is s.Branch (asb/NAME).
func (s Session) HostRef() string { return "refs/heads/" + s.Name }

// sessionRefs is where only asb reads a session's state: its checkout's
// HEAD, and the commit it was branched from (kept reachable).
func sessionRefs(name string) (head, base string) {
	p := "refs/asb/sessions/" + name + "/"
	return p + "HEAD", p + "base"
}

// SessionSource is session s's checkout as the host repository imports it:
// its branch asb/NAME to refs/heads/NAME, its HEAD where only asb reads it.
func SessionSource(s Session) runner.Source {
	head, _ := sessionRefs(s.Name)
	return runner.Source{Name: "session-" + s.Name, Checkout: s.Paths.Workspace, Label: s.Paths.Workspace + "/.git",
		Refspecs: []string{"+refs/heads/" + s.Branch + ":" + s.HostRef()}, HeadRef: head}
}

var commitIDRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{4,64}$`) })

// baseRev is what session s is compared with in the host repository h: its
// base branch as workspace/ has it now, or the commit it left (a detached
// HEAD, a tag or commit, a branch gone since).
func (s Session) baseRev(ctx context.Context, h *runner.HostRepo) string {
	if s.Base != "HEAD" && !commitIDRe().MatchString(s.Base) {
		if _, ok := h.Commit(ctx, runner.WorkspaceBranches+s.Base); ok {
			return runner.WorkspaceBranches + s.Base
		}
	}
	return s.BaseCommit
}

// importWorkspace opens the folder dir's host repository and brings
// workspace/'s commits into it.
func importWorkspace(ctx context.Context, git runner.Git, dir string) (*runner.HostRepo, *runner.Imported, error) {
	h, err := runner.OpenHostRepo(ctx, git, dir)
	if err != nil {
		return nil, nil, err
	}
	imp, err := importInto(ctx, h)
	return h, imp, err
}

// importInto brings workspace/'s commits into h, and points h's HEAD at
// workspace/'s current branch (what a clone of h checks out).
func importInto(ctx context.Context, h *runner.HostRepo) (*runner.Imported, error) {
	imp, err := h.Import(ctx, runner.WorkspaceSource())
	if err != nil {
		return nil, err
	}
	if imp.HeadErr == nil && imp.Head.Ref != "" {
		_ = h.SetHead(ctx, runner.WorkspaceBranches+imp.Head.Branch())
	}
	return imp, nil
}
