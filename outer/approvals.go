package outer

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/schema"
)

// Approvals are the user's approvals of outer folders' content, one file
// each, named by the digest of the folder's resolved path and the content's
// hash (as direnv keeps its allows): asking is one stat. They live in the
// user's state folder, $XDG_STATE_HOME/asb/trust (default
// ~/.local/state/asb/trust), outside every repository.
type Approvals struct{ Dir string }

// ApprovalStore finds the user's approvals folder.
func ApprovalStore(getenv func(string) string) (*Approvals, error) {
	base := getenv("XDG_STATE_HOME")
	if base == "" || !filepath.IsAbs(base) {
		home := getenv("HOME")
		if home == "" || !filepath.IsAbs(home) {
			return nil, errors.New("neither $XDG_STATE_HOME nor $HOME is set to an absolute path: asb keeps your approvals of outer folders there (asb trust)")
		}
		base = filepath.Join(home, ".local", "state")
	}
	return &Approvals{Dir: filepath.Join(base, "asb", "trust")}, nil
}

func (a *Approvals) file(dir, hash string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	sum := sha256.Sum256([]byte(schema.ResolvePath(filepath.Clean(abs)) + "\n" + hash))
	return filepath.Join(a.Dir, hex.EncodeToString(sum[:]))
}

// Approved reports whether the user approved content hash in folder dir.
func (a *Approvals) Approved(dir, hash string) bool {
	fi, err := os.Lstat(a.file(dir, hash))
	return err == nil && fi.Mode().IsRegular()
}

// Approve records the user's approval of content hash in folder dir.
func (a *Approvals) Approve(dir, hash string) error {
	if err := os.MkdirAll(a.Dir, 0o700); err != nil {
		return fmt.Errorf("record the approval: %w", err)
	}
	abs, _ := filepath.Abs(dir)
	// The store is the user's own folder, not an outer folder: its one
	// file is written atomically in it.
	if err := generator.WriteFileAtomic(a.Dir, filepath.Base(a.file(dir, hash)), []byte(abs+"\n"), 0o600); err != nil {
		return fmt.Errorf("record the approval: %w", err)
	}
	return nil
}
