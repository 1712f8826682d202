package runner

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/folderfs"
	"github.com/agents-sandbox/asb/schema"
)

// Identity names this clone's resources on the host. Two clones of one
// outer repository on one machine get different names (the slug carries a
// hash of the clone's git common dir); worktrees of one clone share them.
type Identity struct {
	Slug       string // sanitized folder name + "-" + 8 hex digits
	Agent      string
	VM         string // <slug>-<agent>
	HomeVolume string // <slug>-<agent>-<timestamp>, recorded in .asb/state.yaml
	Image      string // msb image: <slug>:<agent>-latest
	BuildTag   string // builder tag: agents-sandbox/runner-<slug>:<agent>-latest
}

// Vars are the Taskfile variables asb sets from the identity.
func (id Identity) Vars() map[string]string {
	return map[string]string{
		"VM":          id.VM,
		"HOME_VOLUME": id.HomeVolume,
		"IMAGE":       id.Image,
		"BUILD_TAG":   id.BuildTag,
		"SLUG":        id.Slug,
	}
}

// StatePath is the untracked record of this clone's resources.
const StatePath = ".asb/state.yaml"

// State is what StatePath holds.
type State struct {
	// HomeVolume is kept once chosen, so that losing or recreating the VM
	// never costs the home volume.
	HomeVolume string `yaml:"home_volume"`
}

// IdentityOptions steer ResolveIdentity.
type IdentityOptions struct {
	Now time.Time // names a new home volume
	// Record writes a new (or recovered) home volume's name to StatePath.
	Record bool
	// Volumes lists msb's volumes; when StatePath is missing or damaged,
	// this clone's home volume is looked for there before a new one is
	// named, so losing the record never costs the home. nil: no lookup.
	Volumes func() ([]string, error)
	// Say tells the user what was recovered; nil says nothing.
	Say func(string)

	tracked bool // StatePath is tracked by git (readOrRecover)
}

// ResolveIdentity computes the identity of the outer folder dir for agent.
func ResolveIdentity(dir, agent string, o IdentityOptions) (Identity, error) {
	if !schema.ValidProjectName(agent) {
		return Identity{}, fmt.Errorf("the AGENT var of Taskfile.yml, %q, is not a valid agent name", agent)
	}
	common, err := gitCommonDir(dir)
	if err != nil {
		return Identity{}, err
	}
	sum := sha256.Sum256([]byte(common))
	// The name is the clone's folder (the one holding .git), so worktrees of
	// one clone, in folders of other names, share it; 40 characters leave
	// room for the hash, the agent and a timestamp.
	name := filepath.Base(dir)
	if filepath.Base(common) == ".git" {
		name = filepath.Base(filepath.Dir(common))
	}
	slug := schema.SanitizeName(name, 40, "sandbox") + "-" + hex.EncodeToString(sum[:4])
	id := Identity{
		Slug:     slug,
		Agent:    agent,
		VM:       slug + "-" + agent,
		Image:    slug + ":" + agent + "-latest",
		BuildTag: "agents-sandbox/runner-" + slug + ":" + agent + "-latest",
	}
	st, err := readOrRecover(dir, id, o)
	if err != nil {
		return Identity{}, err
	}
	id.HomeVolume = st.HomeVolume
	return id, nil
}

// StateLockPath guards the read-or-create of StatePath: two first runs at
// once must agree on one home volume.
const StateLockPath = ".asb/state.lock"

// readOrRecover reads the recorded state; when no home volume is recorded
// it finds this clone's (Volumes) or names a new one, and, with Record,
// records it, under StateLockPath. A recorded volume that is not this
// clone's (a copy of another folder's state, or one a commit carried) is
// damage: this clone's own is found or made instead. A StatePath that git
// tracks is never read nor written (folderfs.Local): each run finds this
// clone's volume in msb.
func readOrRecover(dir string, id Identity, o IdentityOptions) (State, error) {
	st, err := ReadState(dir)
	if err == nil && st.HomeVolume != "" {
		if OwnHomeVolume(id, st.HomeVolume) {
			return st, nil
		}
		if o.Say != nil {
			o.Say(fmt.Sprintf("asb: %s names the home volume %s, which is not one of this clone's VM %s (a copy of another folder's state?): ignored; this clone uses its own", StatePath, st.HomeVolume, id.VM))
		}
		st = State{}
	}
	var damaged *DamagedStateError
	if err != nil && (!errors.As(err, &damaged) || o.Volumes == nil) {
		return State{}, err
	}
	if folderfs.Local(dir, StatePath) != nil {
		// Tracked by git: neither read nor written; this clone's volume
		// is found in msb at each run.
		o.Record, o.tracked = false, true
	}
	if o.Record {
		l, err := AcquireFolderLock(context.Background(), dir, StateLockPath, Holder("recording the home volume", o.Now), nil)
		if err != nil {
			return State{}, err
		}
		defer l.Release()
		// Another run may have recorded it meanwhile.
		if again, err := ReadState(dir); err == nil && OwnHomeVolume(id, again.HomeVolume) {
			return again, nil
		}
	}
	if st.HomeVolume, err = homeVolume(id, o, damaged != nil); err != nil {
		return State{}, err
	}
	if o.Record {
		if err := WriteState(dir, st); err != nil {
			return State{}, err
		}
	}
	return st, nil
}

// homeTimestamp is how a home volume's name ends: <VM>-20060102-150405.
var homeTimestamp = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^-[0-9]{8}-[0-9]{6}$`) })

// OwnHomeVolume reports whether vol is a home volume of id's VM: its name,
// then the time it was made. No other volume is ever mounted as the home,
// nor reset or pruned as this clone's.
func OwnHomeVolume(id Identity, vol string) bool {
	rest, ok := strings.CutPrefix(vol, id.VM)
	return ok && homeTimestamp().MatchString(rest)
}

// HomeVolumeName is the name of a new home volume of VM vm, made at now:
// what OwnHomeVolume recognises as one of vm's.
func HomeVolumeName(vm string, now time.Time) string {
	return vm + "-" + now.UTC().Format("20060102-150405")
}

// homeVolume finds this clone's home volume among msb's volumes (the
// newest, when there are several), or names a new one.
func homeVolume(id Identity, o IdentityOptions, damaged bool) (string, error) {
	fresh := HomeVolumeName(id.VM, o.Now)
	if o.Volumes == nil {
		return fresh, nil
	}
	vols, err := o.Volumes()
	if err != nil {
		return fresh, nil //nolint:nilerr // without msb there is no volume to lose: the run says msb is missing
	}
	var mine []string
	for _, v := range vols {
		if OwnHomeVolume(id, v) {
			mine = append(mine, v)
		}
	}
	if len(mine) == 0 {
		return fresh, nil
	}
	sort.Strings(mine)
	found := mine[len(mine)-1]
	if o.Say != nil && !o.tracked {
		how := "missing"
		if damaged {
			how = "damaged"
		}
		msg := fmt.Sprintf("asb: %s was %s; found this clone's home volume %s in msb and recorded it", StatePath, how, found)
		if len(mine) > 1 {
			msg += fmt.Sprintf(" (the newest of %d: %s)", len(mine), strings.Join(mine, ", "))
		}
		o.Say(msg)
	}
	return found, nil
}

// DamagedStateError is a StatePath that cannot be read.
type DamagedStateError struct{ Err error }

func (e *DamagedStateError) Error() string {
	return fmt.Sprintf("%s is damaged (%v): fix or delete it; it records the home volume's name", StatePath, e.Err)
}

func (e *DamagedStateError) Unwrap() error { return e.Err }

// ReadState reads .asb/state.yaml; a missing file is an empty state, and
// so is one the outer folder's git tracks (folderfs.Local).
func ReadState(dir string) (State, error) {
	var st State
	if folderfs.Local(dir, StatePath) != nil {
		return st, nil
	}
	raw, err := schema.ReadFile(filepath.Join(dir, StatePath))
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("read %s: %w", StatePath, err)
	}
	if err := yaml.Unmarshal(raw, &st); err != nil {
		return State{}, &DamagedStateError{Err: err}
	}
	if st.HomeVolume != "" && !validResourceName(st.HomeVolume) {
		return State{}, &DamagedStateError{Err: fmt.Errorf("home_volume %q is not a valid volume name", st.HomeVolume)}
	}
	return st, nil
}

// WriteState records st atomically.
func WriteState(dir string, st State) error {
	var buf bytes.Buffer
	buf.WriteString("# asb's record of this clone's resources (git-ignored). Keep it: it names\n# the home volume, which outlives the VM.\n")
	enc := yaml.NewEncoder(&buf)
	if err := enc.Encode(st); err != nil {
		return err
	}
	if err := generator.WriteFileAtomic(dir, StatePath, buf.Bytes(), generator.ModeFile); err != nil {
		return fmt.Errorf("record %s: %w", StatePath, err)
	}
	return nil
}

// gitCommonDir finds the git common dir of the repository holding dir by
// reading .git (a folder, or a worktree's "gitdir:" file) without running
// git; with no repository it returns dir itself.
func gitCommonDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	for p := abs; ; p = filepath.Dir(p) {
		dotgit := filepath.Join(p, ".git")
		fi, err := os.Stat(dotgit)
		if err == nil && fi.IsDir() {
			return dotgit, nil
		}
		if err == nil && fi.Mode().IsRegular() {
			return worktreeCommonDir(p, dotgit)
		}
		if filepath.Dir(p) == p {
			return abs, nil
		}
	}
}

func worktreeCommonDir(root, dotgit string) (string, error) {
	gitdir, err := folderfs.WorktreeGitDir(root, dotgit)
	if err != nil {
		return "", err
	}
	common := gitdir
	if c, err := os.ReadFile(filepath.Join(gitdir, "commondir")); err == nil {
		common = strings.TrimSpace(string(c))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitdir, common)
		}
	}
	common = filepath.Clean(common)
	if r, err := filepath.EvalSymlinks(common); err == nil {
		common = r
	}
	return common, nil
}

func validResourceName(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}
