package outer

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"sort"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/folderfs"
	"github.com/agents-sandbox/asb/runner"
	"github.com/agents-sandbox/asb/schema"
)

// Session is one agent on its own branch of the workspace (asb session
// new): a checkout of its own under .asb/sessions/NAME/workspace, its own
// VM and home volume, and a host port of its own for each port the folder
// forwards. Its record (session.yaml) is host-local state that asb writes;
// its paths and VM name are computed from the name, never read from it.
type Session struct {
	Name       string    `yaml:"name" json:"name"`
	Agent      string    `yaml:"agent" json:"agent"`
	Branch     string    `yaml:"branch" json:"branch"`           // asb/NAME
	Base       string    `yaml:"base" json:"base"`               // the ref it was branched from
	BaseCommit string    `yaml:"base_commit" json:"base_commit"` // that ref's commit then
	Created    time.Time `yaml:"created" json:"created"`
	HomeVolume string    `yaml:"home_volume" json:"home_volume"`
	// Ports maps each port the folder forwards (as sandbox.yaml writes it)
	// to the session's own (a free host port, the same guest port).
	Ports map[string]string `yaml:"ports,omitempty" json:"ports,omitempty"`

	VM    string              `yaml:"-" json:"vm"` // <slug>-<agent>-<NAME>
	Paths schema.SessionPaths `yaml:"-" json:"paths"`
	// LeftHome is the home volume the record names when it is not one of
	// the session's VM (whose name comes from the folder's path): the
	// folder moved, or is a copy. The session then has no home volume
	// until its next run makes one (NewHome); that one is left to asb
	// prune, as the folder's own is.
	LeftHome string `yaml:"-" json:"left_home,omitempty"`
}

// sessionRecordHeader opens every session.yaml.
const sessionRecordHeader = "# asb's record of a session (asb session new): host-local, never committed.\n"

// SessionVM is the VM name of session name of agent in the outer folder dir.
func SessionVM(dir, agent, name string) (string, error) {
	id, err := runner.ResolveIdentity(dir, agent, runner.IdentityOptions{})
	if err != nil {
		return "", err
	}
	return id.VM + "-" + name, nil
}

// Sessions lists the sessions of the outer folder dir, by name. A session
// is one asb made on this machine: its record reads and checks, and its
// checkout holds a .git (which its VM may have made anything: a file, a
// link; asb reads it only through HostRepo.Import, which refuses those),
// and no git clone can carry a .git, so a committed .asb/ of a hostile
// clone yields none.
func Sessions(dir string) ([]Session, error) {
	r, err := folderfs.Open(dir)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	ents, err := fs.ReadDir(r.FS(), schema.SessionsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, folderfs.Explain(schema.SessionsDir, err)
	}
	var out []Session
	for _, e := range ents {
		if !e.IsDir() || schema.SessionName(e.Name()) != nil {
			continue
		}
		s, err := readSession(r, dir, e.Name())
		if err != nil {
			return nil, err
		}
		if s != nil {
			out = append(out, *s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// FindSession returns session name of the outer folder dir.
func FindSession(dir, name string) (Session, error) {
	if re := schema.SessionName(name); re != nil {
		return Session{}, schema.RuleField("session", re)
	}
	r, err := folderfs.Open(dir)
	if err != nil {
		return Session{}, err
	}
	defer r.Close()
	s, err := readSession(r, dir, name)
	if err != nil {
		return Session{}, err
	}
	if s == nil {
		return Session{}, fmt.Errorf("no session %q in %s: asb session ls lists them, asb session new %s makes it", name, dir, name)
	}
	return *s, nil
}

// readSession reads session name's record; nil when there is no session
// of that name made on this machine.
func readSession(r *folderfs.Root, dir, name string) (*Session, error) {
	p := schema.SessionPathsOf(name)
	if _, err := r.Lstat(p.Workspace + "/.git"); err != nil {
		return nil, nil //nolint:nilerr // no checkout of asb's: not a session
	}
	if folderfs.Local(dir, p.Record) != nil {
		return nil, nil // a record a clone carried is no session of this machine
	}
	raw, err := r.ReadFile(p.Record, schema.MaxFileSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, folderfs.Explain(p.Record, err)
	}
	var s Session
	if err := yaml.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("%s is damaged (%v): asb session rm --force %s removes the session", p.Record, err, name)
	}
	if err := s.check(name); err != nil {
		return nil, fmt.Errorf("%s: %w; asb session rm --force %s removes the session", p.Record, err, name)
	}
	s.Paths = p
	if s.VM, err = SessionVM(dir, s.Agent, name); err != nil {
		return nil, err
	}
	if s.HomeVolume != "" && !runner.OwnHomeVolume(runner.Identity{VM: s.VM}, s.HomeVolume) {
		// Only a volume named after this session's VM is ever its home,
		// reset or removed with it: the one the record names was made
		// for the VM of the folder's old path (or the original's, for a
		// copy), which still uses it there.
		s.LeftHome, s.HomeVolume = s.HomeVolume, ""
	}
	return &s, nil
}

// NewHome gives session s, whose record names no home volume of its VM
// (LeftHome), a new one, made by its next run, and records it (under the
// folder's lock). It says what happened when s had one elsewhere.
func NewHome(dir string, s *Session, now time.Time) (note string, err error) {
	s.HomeVolume = runner.HomeVolumeName(s.VM, now)
	if err := WriteSession(dir, *s); err != nil {
		return "", err
	}
	if s.LeftHome == "" {
		return "", nil
	}
	return fmt.Sprintf("session %s: its record named the home volume %s, which belongs to the VM of the folder's old path (the folder moved, or is a copy): the session starts with a new home volume, %s; asb prune removes what the old path left once it is gone", s.Name, s.LeftHome, s.HomeVolume), nil
}

// check refuses a record whose values asb would not have written.
func (s *Session) check(name string) error {
	switch {
	case s.Name != name:
		return fmt.Errorf("it names session %q, not %q", s.Name, name)
	case !schema.ValidProjectName(s.Agent):
		return fmt.Errorf("agent %q is not a valid agent name", s.Agent)
	case s.Branch != schema.SessionBranchPrefix+name:
		return fmt.Errorf("branch %q is not %s%s", s.Branch, schema.SessionBranchPrefix, name)
	case s.HomeVolume != "" && !validVolumeName(s.HomeVolume):
		return fmt.Errorf("home_volume %q is not a valid volume name", s.HomeVolume)
	}
	for from, to := range s.Ports {
		a, errA := schema.ParsePort(from)
		b, errB := schema.ParsePort(to)
		if errA != nil || errB != nil || a.Guest != b.Guest || a.Protocol != b.Protocol || a.Bind != b.Bind {
			return fmt.Errorf("port %q → %q is not a port of the folder given a host port of its own", from, to)
		}
	}
	return nil
}

// WriteSession records s (under the folder's lock).
func WriteSession(dir string, s Session) error {
	var buf bytes.Buffer
	buf.WriteString(sessionRecordHeader)
	if err := yaml.NewEncoder(&buf).Encode(s); err != nil {
		return err
	}
	return generator.WriteFileAtomic(dir, s.Paths.Record, buf.Bytes(), generator.ModeFile)
}

// RemoveSessionFiles removes session s's folder (its record, derived
// config and checkout) and its review record (under the folder's lock).
func RemoveSessionFiles(dir string, s Session) error {
	r, err := folderfs.Open(dir)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := r.RemoveAll(s.Paths.Dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return folderfs.Explain(s.Paths.Dir, err)
	}
	_, record := reviewTree(s.Name)
	if err := r.Remove(record); err != nil && !errors.Is(err, os.ErrNotExist) {
		return folderfs.Explain(record, err)
	}
	return nil
}

var volumeNameRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,127}$`) })

func validVolumeName(s string) bool { return volumeNameRe().MatchString(s) }

// SessionGone says whether the folder dir has no session name any more
// (asb prune removes what such a session left). A session asb cannot read
// (a damaged record, a folder it cannot open) is not gone: prune keeps
// what it cannot judge.
func SessionGone(dir, name string) bool {
	if schema.SessionName(name) != nil {
		return false
	}
	r, err := folderfs.Open(dir)
	if err != nil {
		return false
	}
	defer r.Close()
	s, err := readSession(r, dir, name)
	return s == nil && err == nil
}
