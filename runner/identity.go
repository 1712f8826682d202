package runner

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/agents-sandbox/asb/generator"
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

// ResolveIdentity computes the identity of the outer folder dir for agent.
// When record is true and no home volume is recorded yet, it picks one
// (named with now) and records it in .asb/state.yaml.
func ResolveIdentity(dir, agent string, now time.Time, record bool) (Identity, error) {
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
	st, err := ReadState(dir)
	if err != nil {
		return Identity{}, err
	}
	if st.HomeVolume == "" {
		st.HomeVolume = id.VM + "-" + now.UTC().Format("20060102-150405")
		if record {
			if err := WriteState(dir, st); err != nil {
				return Identity{}, err
			}
		}
	}
	id.HomeVolume = st.HomeVolume
	return id, nil
}

// ReadState reads .asb/state.yaml; a missing file is an empty state.
func ReadState(dir string) (State, error) {
	var st State
	raw, err := os.ReadFile(filepath.Join(dir, StatePath))
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("read %s: %w", StatePath, err)
	}
	if err := yaml.Unmarshal(raw, &st); err != nil {
		return st, fmt.Errorf("%s is damaged (%v): fix or delete it; it records the home volume's name", StatePath, err)
	}
	if st.HomeVolume != "" && !validResourceName(st.HomeVolume) {
		return st, fmt.Errorf("%s: home_volume %q is not a valid volume name", StatePath, st.HomeVolume)
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
	path := filepath.Join(dir, StatePath)
	if err := os.MkdirAll(filepath.Dir(path), generator.ModeDir); err != nil {
		return fmt.Errorf("record %s: %w", StatePath, err)
	}
	if err := generator.WriteFileAtomic(path, buf.Bytes(), generator.ModeFile); err != nil {
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
	raw, err := os.ReadFile(dotgit)
	if err != nil {
		return "", err
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(raw)), "gitdir:")
	if !ok {
		return "", fmt.Errorf("%s is not a git worktree link", dotgit)
	}
	gitdir = strings.TrimSpace(gitdir)
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(root, gitdir)
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
