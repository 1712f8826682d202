package outer

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/folderfs"
	"github.com/agents-sandbox/asb/schema"
)

// Approvals are the user's approvals of outer folders, in the user's state
// folder, $XDG_STATE_HOME/asb/trust (default ~/.local/state/asb/trust),
// outside every repository. Each folder (by the digest of its resolved
// path) has a folder of its own there:
//
//	set-HASH.json     an approved content (TrustSet.Hash): when, how, the
//	                  boundary it granted (Grants) and its files' digests
//	answers-HASH      approved answers (TrustSet.AnswersHash): asb's render
//	                  of them runs as it is
//	last.json         the latest approved content, to compare with
//	verdict.json      the cached verdict (trust_cache.go)
//
// Asking is a stat, as with direnv's allows. asb trust --revoke removes the
// folder's.
type Approvals struct{ Dir string }

// ApprovalStore finds the user's approvals folder.
func ApprovalStore(getenv func(string) string) (*Approvals, error) {
	base, err := StateHome(getenv)
	if err != nil {
		return nil, errors.New("neither $XDG_STATE_HOME nor $HOME is set to an absolute path: asb keeps your approvals of outer folders there (asb trust)")
	}
	return &Approvals{Dir: filepath.Join(base, "asb", "trust")}, nil
}

// StateHome is $XDG_STATE_HOME, or ~/.local/state.
func StateHome(getenv func(string) string) (string, error) {
	base := getenv("XDG_STATE_HOME")
	if base == "" || !filepath.IsAbs(base) {
		home := getenv("HOME")
		if home == "" || !filepath.IsAbs(home) {
			return "", errors.New("neither $XDG_STATE_HOME nor $HOME is set to an absolute path")
		}
		base = filepath.Join(home, ".local", "state")
	}
	return base, nil
}

// Approval is one approved content of a folder.
type Approval struct {
	Dir     string            `json:"dir"`
	Hash    string            `json:"hash"`
	Answers string            `json:"answers"`
	At      time.Time         `json:"approved_at"`
	How     string            `json:"how"` // asb trust, asb init, an edit, asb's render of approved answers
	Grants  *Grants           `json:"grants,omitempty"`
	Files   map[string]string `json:"files"` // name → sha256 of its content in the set
}

// folder is the store's folder for the outer folder dir.
func (a *Approvals) folder(dir string) string {
	sum := sha256.Sum256([]byte(resolvedDir(dir)))
	return filepath.Join(a.Dir, "folders", hex.EncodeToString(sum[:]))
}

func resolvedDir(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	return schema.ResolvePath(filepath.Clean(abs))
}

func (a *Approvals) setPath(dir, hash string) string {
	return filepath.Join(a.folder(dir), "set-"+hash+".json")
}

func (a *Approvals) answersPath(dir, hash string) string {
	return filepath.Join(a.folder(dir), "answers-"+hash)
}

// Approved reports whether the user approved content hash in folder dir.
func (a *Approvals) Approved(dir, hash string) bool { return isFile(a.setPath(dir, hash)) }

// AnswersApproved reports whether the user approved the answers hash in
// folder dir.
func (a *Approvals) AnswersApproved(dir, hash string) bool {
	return isFile(a.answersPath(dir, hash))
}

func isFile(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode().IsRegular()
}

// Approve records ap: its content, its answers, and it as the latest.
func (a *Approvals) Approve(ap *Approval) error {
	dir := a.folder(ap.Dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("record the approval: %w", err)
	}
	raw, err := json.MarshalIndent(ap, "", "  ")
	if err != nil {
		return err
	}
	// The store is the user's own folder, not an outer folder: its files
	// are written atomically in it.
	for name, data := range map[string][]byte{
		filepath.Base(a.setPath(ap.Dir, ap.Hash)):        raw,
		filepath.Base(a.answersPath(ap.Dir, ap.Answers)): []byte(ap.Dir + "\n"),
		"last.json": raw,
	} {
		if err := generator.WriteFileAtomic(dir, name, data, 0o600); err != nil {
			return fmt.Errorf("record the approval: %w", err)
		}
	}
	return nil
}

// ApproveAnswers records approved answers alone (asb init: what the user
// typed).
func (a *Approvals) ApproveAnswers(dir, hash string) error {
	d := a.folder(dir)
	if err := os.MkdirAll(d, 0o700); err != nil {
		return fmt.Errorf("record the approval: %w", err)
	}
	return generator.WriteFileAtomic(d, filepath.Base(a.answersPath(dir, hash)), []byte(resolvedDir(dir)+"\n"), 0o600)
}

// Last is the latest approval of folder dir (nil when there is none).
func (a *Approvals) Last(dir string) *Approval {
	raw, err := os.ReadFile(filepath.Join(a.folder(dir), "last.json"))
	if err != nil {
		return nil
	}
	var ap Approval
	if json.Unmarshal(raw, &ap) != nil {
		return nil
	}
	return &ap
}

// Revoke forgets every approval of folder dir; asb runs nothing of it
// until it is approved again.
func (a *Approvals) Revoke(dir string) (bool, error) {
	d := a.folder(dir)
	if _, err := os.Lstat(d); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return true, os.RemoveAll(d)
}

// stampApproval stamps what a check consulted of the store: the approval
// it found (or the absence it found), for the cache.
func (a *Approvals) stamp(st *stamps, paths ...string) {
	for _, p := range paths {
		s, err := folderfs.StampPath(p)
		if err == nil {
			st.putAbs(p, s)
		}
	}
}
