package serve

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The ports asb serve picks from: above the usual dev servers, below the
// kernel's ephemeral range (32768–60999 on Linux starts lower, but these
// are rarely taken; a port in use is skipped anyway).
const (
	FirstPort = 41000
	PortCount = 1000
)

// Claims are the ports asb serve holds on this machine, one file per port
// naming the folder that holds it, under $XDG_STATE_HOME/asb/ports: a
// folder whose VM is stopped keeps its port, so no other folder takes it.
type Claims struct{ Dir string }

// ClaimStore finds the user's claims folder.
func ClaimStore(getenv func(string) string) (*Claims, error) {
	base := getenv("XDG_STATE_HOME")
	if base == "" || !filepath.IsAbs(base) {
		home := getenv("HOME")
		if home == "" || !filepath.IsAbs(home) {
			return nil, errors.New("neither $XDG_STATE_HOME nor $HOME is set to an absolute path: asb keeps the ports it serves on there")
		}
		base = filepath.Join(home, ".local", "state")
	}
	return &Claims{Dir: filepath.Join(base, "asb", "ports")}, nil
}

// Holder is the folder that claims port ("" when none does).
func (c *Claims) Holder(port int) string {
	raw, err := os.ReadFile(filepath.Join(c.Dir, strconv.Itoa(port)))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(raw))
}

// Keep reports whether folder may keep port: it claims it already, or it
// claims it now (nobody else did).
func (c *Claims) Keep(folder string, port int) (bool, error) {
	switch h := c.Holder(port); h {
	case folder:
		return true, nil
	case "":
		return c.claim(folder, port)
	default:
		return false, nil
	}
}

// Pick claims a port for folder: the first, from a start its path decides,
// that no folder claims and that free says nobody listens on (BindFree, and
// the ports msb's sandboxes forward).
func (c *Claims) Pick(folder string, free func(int) bool) (int, error) {
	start := StartPort(folder) - FirstPort
	for i := range PortCount {
		p := FirstPort + (start+i)%PortCount
		if h := c.Holder(p); h != "" && h != folder && folderExists(h) {
			continue
		}
		if !free(p) {
			continue
		}
		_ = os.Remove(filepath.Join(c.Dir, strconv.Itoa(p))) // a claim of a folder that is gone
		ok, err := c.claim(folder, p)
		if err != nil {
			return 0, err
		}
		if ok {
			return p, nil
		}
	}
	return 0, fmt.Errorf("no free port in 127.0.0.1:%d-%d for asb serve: every one is in use or held by another folder (%s)", FirstPort, FirstPort+PortCount-1, c.Dir)
}

// StartPort is the first port Pick tries for folder: spread by its path,
// so folders rarely meet on one.
func StartPort(folder string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(folder))
	return FirstPort + int(h.Sum32()%PortCount)
}

// Release drops folder's claim of port.
func (c *Claims) Release(folder string, port int) {
	if c.Holder(port) == folder {
		_ = os.Remove(filepath.Join(c.Dir, strconv.Itoa(port)))
	}
}

func (c *Claims) claim(folder string, port int) (bool, error) {
	if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		return false, fmt.Errorf("asb serve's port claims: %w", err)
	}
	fh, err := os.OpenFile(filepath.Join(c.Dir, strconv.Itoa(port)), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return false, nil // another asb serve won the race
	}
	if err != nil {
		return false, fmt.Errorf("asb serve's port claims: %w", err)
	}
	_, err = fh.WriteString(folder + "\n")
	return err == nil, errors.Join(err, fh.Close())
}

func folderExists(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, RecordFile))
	return err == nil
}

// BindFree reports whether nothing listens on 127.0.0.1:port (nor on all
// interfaces, which also holds it).
func BindFree(port int) bool {
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return false
	}
	_ = l.Close()
	return true
}
