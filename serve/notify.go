package serve

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"runtime"
	"sync"
	"time"

	"github.com/agents-sandbox/asb/internal/folderfs"
	"github.com/agents-sandbox/asb/internal/proc"
	"github.com/agents-sandbox/asb/internal/termtext"
)

// The notification modes of a folder: none (the default), a desktop
// notification, or a terminal bell on the client's terminal.
const (
	NotifyOff     = "off"
	NotifyDesktop = "desktop"
	NotifyBell    = "bell"
)

// ParseMode checks a --notify value ("" is off).
func ParseMode(s string) (string, error) {
	switch s {
	case "", NotifyOff:
		return NotifyOff, nil
	case NotifyDesktop, NotifyBell:
		return s, nil
	}
	return "", fmt.Errorf("notify %q: use desktop, bell or off", s)
}

// SeenDir is where the clients of a folder mark the events they notified.
const SeenDir = ".asb/notify"

// Dedup makes one notification of an event however many clients see it:
// the first client to create the event's marker file sends it. A marker
// older than Window is stale (the same session idle again later).
type Dedup struct {
	Dir    string // the outer folder
	Now    func() time.Time
	Window time.Duration
}

// Claim reports whether this client is the one to notify id.
func (d *Dedup) Claim(id string) (bool, error) {
	root, err := folderfs.Open(d.Dir)
	if err != nil {
		return false, err
	}
	defer func() { _ = root.Close() }()
	if err := root.MkdirAll(SeenDir, 0o700); err != nil {
		return false, folderfs.Explain(SeenDir, err)
	}
	sum := sha256.Sum256([]byte(id))
	rel := path.Join(SeenDir, hex.EncodeToString(sum[:12]))
	if folderfs.Local(d.Dir, rel) != nil {
		return true, nil // a marker a clone carried says nothing of this machine
	}
	for range 2 {
		fh, err := root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			_ = fh.Close()
			return true, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return false, folderfs.Explain(rel, err)
		}
		fi, serr := root.Stat(rel)
		if serr != nil || d.Now().Sub(fi.ModTime()) < d.Window {
			return false, nil
		}
		_ = root.Remove(rel) // stale: the event happened again
	}
	return false, nil
}

// Prune removes the markers of events older than a day, so the folder's
// .asb/notify/ does not grow without end.
func (d *Dedup) Prune() {
	root, err := folderfs.Open(d.Dir)
	if err != nil {
		return
	}
	defer func() { _ = root.Close() }()
	entries, err := fs.ReadDir(root.FS(), SeenDir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() && d.Now().Sub(fi.ModTime()) > 24*time.Hour {
			_ = root.Remove(path.Join(SeenDir, e.Name()))
		}
	}
}

// Notifier turns events into notifications in one mode.
type Notifier struct {
	Mode    string
	Project string
	Seen    *Dedup
	// Desktop shows a notification (DesktopNotify); Bell is the client's
	// terminal.
	Desktop func(ctx context.Context, title, body string) error
	Bell    io.Writer
	Warn    io.Writer

	warned sync.Once
}

// Message is the text of an event's notification.
func Message(project string, e Event) (title, body string) {
	title = "asb: " + project
	switch e.Kind {
	case KindInput:
		body = "The agent waits for your answer."
	case KindDone:
		body = "The agent finished."
	default:
		body = "The agent stopped with an error."
	}
	return title, body
}

// Handle notifies e unless notifications are off or another client did.
func (n *Notifier) Handle(ctx context.Context, e Event) (bool, error) {
	if n.Mode == NotifyOff || n.Mode == "" {
		return false, nil
	}
	first, err := n.Seen.Claim(e.ID)
	if err != nil || !first {
		return false, err
	}
	title, body := Message(n.Project, e)
	if n.Mode == NotifyDesktop && n.Desktop != nil {
		err := n.Desktop(ctx, title, body)
		if err == nil {
			return true, nil
		}
		n.warned.Do(func() {
			if n.Warn != nil {
				fmt.Fprintf(n.Warn, "asb: desktop notification failed (%v); ringing the terminal bell instead\n", err)
			}
		})
	}
	err = termtext.Ring(n.Bell)
	return err == nil, err
}

// Watch notifies src's events until ctx ends or the stream does.
func Watch(ctx context.Context, src Source, n *Notifier) error {
	if n.Mode == NotifyOff || n.Mode == "" {
		return nil
	}
	n.Seen.Prune()
	var herr error
	err := src.Events(ctx, func(e Event) {
		if _, err := n.Handle(ctx, e); err != nil && herr == nil {
			herr = err
		}
	})
	return errors.Join(err, herr)
}

// DesktopNotify shows a desktop notification: notify-send (freedesktop
// D-Bus notifications) on Linux, osascript on macOS. Title and body travel
// as arguments of their own, never through a shell or a script's text.
func DesktopNotify(ctx context.Context, title, body string) error {
	var argv []string
	switch runtime.GOOS {
	case "darwin":
		argv = []string{"osascript", "-e", "on run argv", "-e", "display notification (item 2 of argv) with title (item 1 of argv)", "-e", "end run", title, body}
	default:
		argv = []string{"notify-send", "--app-name=asb", title, body}
	}
	p, err := exec.LookPath(argv[0])
	if err != nil {
		return fmt.Errorf("%s not found (on Debian: apt-get install libnotify-bin)", argv[0])
	}
	out, err := proc.Command(ctx, p, argv[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", argv[0], err, out)
	}
	return nil
}
