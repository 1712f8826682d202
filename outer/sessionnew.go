package outer

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"time"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/host"
	"github.com/agents-sandbox/asb/internal/folderfs"
	"github.com/agents-sandbox/asb/runner"
	"github.com/agents-sandbox/asb/schema"
)

// NewSessionOptions are asb session new's.
type NewSessionOptions struct {
	Name  string
	Agent string // "": the Taskfile's AGENT
	Base  string // "": the workspace's current branch
	Now   time.Time
	Git   runner.Git
	// Capacity checks that the machine can hold a VM asking for cpus and
	// memory (host.CanHold on the facts); nil checks nothing.
	Capacity func(vm string, cpus int, memMiB int64) (note string, err error)
	// FreePort is host.FreePort unless set.
	FreePort func(bind, proto string, taken map[int]bool) (int, error)
	// Room is the free space of the folder's file system; its nil Bytes
	// checks nothing (checkoutFits).
	Room Room
}

// NewSession makes session o.Name of the outer folder f (held under the
// folder's lock): the branch asb/NAME from the base in a checkout of its
// own, its record and its derived sandbox.yaml. The VM is made by the
// first asb task --session NAME. It returns the session and a note on
// the machine's CPUs, if any.
func NewSession(ctx context.Context, f *Folder, o NewSessionOptions) (Session, string, error) {
	if re := schema.SessionName(o.Name); re != nil {
		return Session{}, "", schema.RuleField("session", re)
	}
	dir := f.Dir
	agent, err := sessionAgent(dir, o.Agent)
	if err != nil {
		return Session{}, "", err
	}
	s := Session{Name: o.Name, Agent: agent, Branch: schema.SessionBranchPrefix + o.Name, Created: o.Now.UTC().Truncate(time.Second),
		Paths: schema.SessionPathsOf(o.Name)}
	h, imp, err := sessionFree(ctx, f, o, s)
	if err != nil {
		return Session{}, "", err
	}
	if s.Base, s.BaseCommit, err = sessionBase(ctx, h, imp, o.Base); err != nil {
		return Session{}, "", err
	}
	if err := checkoutFits(ctx, dir, h, s, o.Room); err != nil {
		return Session{}, "", err
	}
	if s.VM, err = SessionVM(dir, agent, o.Name); err != nil {
		return Session{}, "", err
	}
	s.HomeVolume = runner.HomeVolumeName(s.VM, o.Now)
	note, err := sessionFits(f, o, s.VM)
	if err != nil {
		return Session{}, "", err
	}
	if err := assignPorts(dir, f, &s, o.FreePort); err != nil {
		return Session{}, "", err
	}
	if err := makeCheckout(ctx, dir, s, h); err != nil {
		return Session{}, "", err
	}
	err = WriteSession(dir, s)
	if err == nil {
		_, err = WriteSessionConf(dir, s)
	}
	if err != nil {
		_ = RemoveSessionFiles(dir, s)
		_, base := sessionRefs(s.Name)
		_ = h.DeleteRefs(ctx, s.HostRef(), base)
		return Session{}, "", err
	}
	return s, note, nil
}

// sessionAgent is the agent a session runs: the Taskfile's AGENT, or one
// added beside it (a task agent:NAME).
func sessionAgent(dir, agent string) (string, error) {
	tf, err := runner.ReadTaskfile(dir)
	if err != nil {
		return "", err
	}
	main := tf.StaticVar("AGENT")
	if agent == "" || agent == main {
		if main == "" {
			return "", fmt.Errorf("%s/Taskfile.yml sets no AGENT var: is it a Taskfile made by asb init?", dir)
		}
		return main, nil
	}
	if !schema.ValidProjectName(agent) || !slices.Contains(tf.Names(), "agent:"+agent) {
		return "", fmt.Errorf("--agent %q: this folder runs %s (asb agent add NAME adds another)", agent, main)
	}
	return agent, nil
}

// sessionFree refuses a name that a session, its folder or its branch
// already has; it brings workspace/'s commits into the host repository,
// which it returns.
func sessionFree(ctx context.Context, f *Folder, o NewSessionOptions, s Session) (*runner.HostRepo, *runner.Imported, error) {
	r, err := folderfs.Open(f.Dir)
	if err != nil {
		return nil, nil, err
	}
	_, err = r.Lstat(s.Paths.Dir)
	r.Close()
	if err == nil {
		return nil, nil, fmt.Errorf("session %s exists already (%s): asb session rm %s ends it", s.Name, s.Paths.Dir, s.Name)
	}
	ws := filepath.Join(f.Dir, WorkspaceDir)
	if !runner.IsRepoRoot(ws) {
		return nil, nil, notARepo(f.Dir, ws)
	}
	h, imp, err := importWorkspace(ctx, o.Git, f.Dir)
	if err != nil {
		return nil, nil, err
	}
	if _, ok := h.Commit(ctx, s.HostRef()); ok {
		return nil, nil, fmt.Errorf("the host repository %s has a branch %s already (a session of that name ended with its branch kept?): name the session otherwise, or delete it (git --git-dir=%s branch -D %s)", runner.HostRepoDir, s.Name, runner.HostRepoDir, s.Name)
	}
	return h, imp, nil
}

// sessionBase resolves the base of a new session in the host repository
// (workspace/'s commits imported): base as given (a branch, tag or commit
// of workspace/), or workspace/'s current branch, or its detached HEAD.
func sessionBase(ctx context.Context, h *runner.HostRepo, imp *runner.Imported, base string) (name, commit string, err error) {
	if base == "" {
		return currentBase(ctx, h, imp)
	}
	for _, ref := range []string{runner.WorkspaceBranches + base, runner.WorkspaceTags + base} {
		if !runner.ValidRefName(ref) {
			continue
		}
		if c, ok := h.Commit(ctx, ref); ok {
			return base, c, nil
		}
	}
	if commitIDRe().MatchString(base) {
		if c, ok := h.Commit(ctx, base); ok {
			return base, c, nil
		}
	}
	return "", "", fmt.Errorf("%q is not a branch, tag or commit of workspace/: give one it has", base)
}

// currentBase is workspace/'s current branch and its commit, as imported.
func currentBase(ctx context.Context, h *runner.HostRepo, imp *runner.Imported) (name, commit string, err error) {
	if imp.HeadErr != nil {
		return "", "", fmt.Errorf("workspace/.git's HEAD cannot be read (%v): give the base, asb session new NAME --base BRANCH", imp.HeadErr)
	}
	head := imp.Head
	if head.Ref == "" {
		if c, ok := h.Commit(ctx, runner.WorkspaceHeadRef); ok {
			return "HEAD", c, nil
		}
	} else if c, ok := h.Commit(ctx, runner.WorkspaceBranches+head.Branch()); ok {
		return head.Branch(), c, nil
	}
	return "", "", fmt.Errorf("workspace/ has no commit yet: commit something first (a session branches from it)")
}

// sessionFits asks o.Capacity whether the machine can hold the VM that
// sandbox.yaml describes.
func sessionFits(f *Folder, o NewSessionOptions, vm string) (string, error) {
	if o.Capacity == nil {
		return "", nil
	}
	cpus, mem := asks(f)
	return o.Capacity(vm, cpus, mem)
}

// SessionFits is host.CanHold for a session's VM: what sandbox.yaml asks
// for, against machine m and the running sandboxes held.
func SessionFits(f *Folder, vm string, m host.Machine, held []host.Held) (string, error) {
	cpus, mem := asks(f)
	return host.CanHold(m, held, vm, cpus, mem)
}

// asks is the CPUs and memory (MiB) sandbox.yaml asks for (msb's
// defaults when unset: 1 CPU; memory 0, which no check refuses).
func asks(f *Folder) (int, int64) {
	data, _ := f.Current(SandboxFile)
	sb, _, _ := schema.LoadSandbox(SandboxFile, data)
	cpus, mem := 1, int64(0)
	if sb != nil && sb.CPUs > 0 {
		cpus = sb.CPUs
	}
	if sb != nil && sb.Memory != "" {
		if n, err := schema.ParseSize(sb.Memory); err == nil {
			mem = n
		}
	}
	return cpus, mem
}

func assignPorts(dir string, f *Folder, s *Session, free func(string, string, map[int]bool) (int, error)) error {
	if free == nil {
		free = host.FreePort
	}
	data, _ := f.Current(SandboxFile)
	ports, err := FolderPorts(data)
	if err != nil {
		return err
	}
	others, err := Sessions(dir)
	if err != nil {
		return err
	}
	_, err = AssignSessionPorts(s, ports, others, free)
	return err
}

// makeCheckout makes the session's folder through the folder's confined
// root (no link leads it out), the session's branch in the host
// repository at its base, and the checkout from there: never from
// workspace/.git, whose links or alternates could name another repository.
func makeCheckout(ctx context.Context, dir string, s Session, h *runner.HostRepo) error {
	r, err := folderfs.Open(dir)
	if err != nil {
		return err
	}
	err = r.MkdirAll(s.Paths.Dir, generator.ModeDir)
	r.Close()
	if err != nil {
		return folderfs.Explain(s.Paths.Dir, err)
	}
	_, base := sessionRefs(s.Name)
	err = h.CreateRef(ctx, s.HostRef(), s.BaseCommit)
	if err == nil {
		_ = h.DeleteRefs(ctx, base)
		err = h.CreateRef(ctx, base, s.BaseCommit)
	}
	if err == nil {
		err = h.MakeCheckout(ctx, s.HostRef(), filepath.Join(dir, filepath.FromSlash(s.Paths.Workspace)), s.Branch)
	}
	if err != nil {
		_ = RemoveSessionFiles(dir, s)
		_ = h.DeleteRefs(ctx, s.HostRef(), base)
		return err
	}
	return nil
}

// notARepo says why workspace/ cannot be branched, and what to do: a local
// workspace (asb.yaml: local, not shared) says where the project is.
func notARepo(dir, ws string) error {
	rec, _ := schema.ReadRecord(dir)
	empty := true
	if r, err := folderfs.Open(dir); err == nil {
		if entries, err := fs.ReadDir(r.FS(), WorkspaceDir); err == nil && len(entries) > 0 {
			empty = false
		}
		r.Close()
	}
	switch {
	case rec != nil && rec.Workspace.Local != "" && empty:
		return fmt.Errorf("workspace/ is empty: the project is %s; a session is a branch of it: clone the project yourself into workspace/ (git clone URL workspace), or ask its author to give it a remote (%s)",
			rec.Workspace.LocalNote(), schema.LocalShareFix(rec.Agent))
	case rec != nil && rec.Workspace.Local == schema.LocalFolder:
		return fmt.Errorf("%s is not a git repository (%s): a session is a branch of it; make it one first: git -C workspace init && git -C workspace add -A && git -C workspace commit -m start",
			ws, rec.Workspace.LocalNote())
	}
	return fmt.Errorf("%s is not a git repository: a session is a branch of it (git init and commit there first)", ws)
}
