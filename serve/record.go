// Package serve is what asb serve and asb attach share: the record of a
// folder's served port (.asb/serve.json), the machine-wide claims that keep
// two folders off one port, the server's password in secrets.env, the
// server's health and event stream, and the notifications made of its
// events, deduplicated across clients.
package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strconv"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/folderfs"
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

// Load reads dir's serve record; ok is false when the folder has none, or
// when the outer folder's git tracks it (it came with a clone: the port
// is this machine's pick, folderfs.Local).
func Load(dir string) (rec *Record, ok bool, err error) {
	if folderfs.Local(dir, RecordFile) != nil {
		return nil, false, nil
	}
	root, err := folderfs.Open(dir)
	if err != nil {
		return nil, false, err
	}
	defer func() { _ = root.Close() }()
	raw, err := root.ReadFile(RecordFile, 1<<16)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, folderfs.Explain(RecordFile, err)
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

// Save writes the record (0600, atomically, inside the folder); not over
// a record git tracks, which asb never reads back.
func Save(dir string, r *Record) error {
	if folderfs.Local(dir, RecordFile) != nil {
		return nil
	}
	raw, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return generator.WriteFileAtomic(dir, RecordFile, append(raw, '\n'), 0o600)
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
