// Package serve is what asb serve and asb attach share: the record of a
// folder's served port (.asb/serve.json), the machine-wide claims that keep
// two folders off one port, the server's password in secrets.env, the
// server's health and event stream, and the notifications made of its
// events, deduplicated across clients.
package serve

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/folderfs"
	"github.com/agents-sandbox/asb/outer"
)

// RecordFile is the folder's serve record: machine-local (.asb/ is
// git-ignored), since the port is this machine's pick.
const RecordFile = ".asb/serve.json"

// Record is which host port forwards to the agent's server, and whether
// this user wants notifications from this folder.
type Record struct {
	Port      int    `json:"port"`
	GuestPort int    `json:"guest_port"`
	Notify    string `json:"notify,omitempty"`
}

// Forward is the record as msb create's --port value: the host's
// 127.0.0.1 only, never another interface.
func (r *Record) Forward() string {
	return "127.0.0.1:" + strconv.Itoa(r.Port) + ":" + strconv.Itoa(r.GuestPort)
}

// URL is where a client on this host reaches the server.
func (r *Record) URL() string { return "http://127.0.0.1:" + strconv.Itoa(r.Port) }

// Load reads dir's serve record; ok is false when the folder has none.
// A record the outer folder's git tracks (a clone carried it) is never
// read (folderfs.Local): this clone's own is then kept in the user's
// state folder (recordAt).
func Load(dir string) (rec *Record, ok bool, err error) {
	base, rel, inFolder := recordAt(dir)
	var raw []byte
	if inFolder {
		root, err := folderfs.Open(dir)
		if err != nil {
			return nil, false, err
		}
		defer func() { _ = root.Close() }()
		raw, err = root.ReadFile(rel, 1<<16)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, false, folderfs.Explain(rel, err)
		}
	} else if base != "" {
		if raw, err = os.ReadFile(filepath.Join(base, rel)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, false, err
		}
	}
	if raw == nil {
		return nil, false, nil
	}
	var r Record
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, false, fmt.Errorf("%s: %w (asb serve writes it; remove it and run asb serve again)", RecordFile, err)
	}
	if r.Port < 1 || r.Port > 65535 || r.GuestPort < 1 || r.GuestPort > 65535 {
		return nil, false, fmt.Errorf("%s: port %d → %d is out of range (remove the file and run asb serve again)", RecordFile, r.Port, r.GuestPort)
	}
	if _, err := ParseMode(r.Notify); err != nil {
		return nil, false, fmt.Errorf("%s: %w", RecordFile, err)
	}
	return &r, true, nil
}

// Save writes the record (0600, atomically), where Load reads it.
func Save(dir string, r *Record) error {
	raw, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	base, rel, inFolder := recordAt(dir)
	switch {
	case base == "":
		return errors.New("neither $XDG_STATE_HOME nor $HOME is set to an absolute path: asb keeps this clone's served port there, as the folder's git tracks " + RecordFile)
	case !inFolder:
		if err := os.MkdirAll(base, 0o700); err != nil {
			return err
		}
	}
	return generator.WriteFileAtomic(base, rel, append(raw, '\n'), 0o600)
}

// recordAt is where dir's record is kept: RecordFile in the folder, or,
// when the folder's git tracks that, a file of the user's state folder
// named by the folder's path (base is "" when there is none).
func recordAt(dir string) (base, rel string, inFolder bool) {
	if folderfs.Local(dir, RecordFile) == nil {
		return dir, RecordFile, true
	}
	state, err := outer.StateHome(os.Getenv)
	if err != nil {
		return "", "", false
	}
	abs, _ := filepath.Abs(dir)
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(state, "asb", "serve"), hex.EncodeToString(sum[:]) + ".json", false
}

// Flags are msb create's flags for the record: the forward, when the
// folder serves (asb msb-conf prints them, so vm:create passes them).
func Flags(dir string) ([]string, error) {
	r, ok, err := Load(dir)
	if err != nil || !ok {
		return nil, err
	}
	return []string{"--port", r.Forward()}, nil
}
