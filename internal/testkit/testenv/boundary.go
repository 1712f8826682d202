package testenv

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Boundary is what a test expects msb to enforce for an outer folder made
// by asb init, as `msb inspect NAME --format json` shows it.
type Boundary struct {
	Dir        string            // the outer folder: binds are Dir/workspace rw and Dir/opencode ro
	HomeVolume string            // the named volume at /home/dev
	Allow      []string          // the egress allow rules' domains
	Secrets    map[string]string // variable → its allowed hosts, comma-joined in order
}

// inspected is the part of `msb inspect --format json` CheckBoundary reads.
type inspected struct {
	Config struct {
		Mounts []struct {
			Type    string `json:"type"`
			Host    string `json:"host"`
			Name    string `json:"name"`
			Guest   string `json:"guest"`
			Options struct {
				Readonly bool `json:"readonly"`
			} `json:"options"`
			Storage struct {
				Kind        string `json:"kind"`
				CapacityMiB int    `json:"capacity_mib"`
			} `json:"storage"`
		} `json:"mounts"`
		Network struct {
			Policy struct {
				DefaultEgress string `json:"default_egress"`
				Rules         []struct {
					Action      string `json:"action"`
					Direction   string `json:"direction"`
					Destination struct {
						Domain string `json:"domain"`
						Group  string `json:"group"`
					} `json:"destination"`
				} `json:"rules"`
			} `json:"policy"`
			Secrets struct {
				Secrets []struct {
					EnvVar       string `json:"env_var"`
					AllowedHosts []struct {
						Exact string `json:"exact"`
					} `json:"allowed_hosts"`
					Source struct {
						Kind string `json:"kind"`
						Var  string `json:"var"`
					} `json:"source"`
					Value *string `json:"value"`
				} `json:"secrets"`
			} `json:"secrets"`
		} `json:"network"`
	} `json:"config"`
}

// CheckBoundary asserts that raw (msb inspect's JSON) holds exactly the
// mounts, egress rules and secret bindings of want, and no secret value.
func CheckBoundary(t testing.TB, raw []byte, want Boundary) {
	t.Helper()
	var got inspected
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("msb inspect: %v\n%s", err, raw)
	}
	cfg := got.Config

	// Mounts: the two binds of sandbox.yaml, the home volume and the
	// container disk of vm:create, nothing else.
	var mounts []string
	for _, m := range cfg.Mounts {
		switch m.Type {
		case "Bind":
			mounts = append(mounts, fmt.Sprintf("bind %s -> %s ro=%v", filepath.Clean(m.Host), m.Guest, m.Options.Readonly))
		case "Named":
			mounts = append(mounts, fmt.Sprintf("named %s -> %s ro=%v", m.Name, m.Guest, m.Options.Readonly))
		case "Owned":
			mounts = append(mounts, fmt.Sprintf("owned %s %dMiB -> %s", m.Storage.Kind, m.Storage.CapacityMiB, m.Guest))
		default:
			mounts = append(mounts, fmt.Sprintf("%s %s -> %s", m.Type, m.Host, m.Guest))
		}
	}
	slices.Sort(mounts)
	wantMounts := []string{
		"bind " + filepath.Join(want.Dir, "opencode") + " -> /home/dev/.config/opencode ro=true",
		"bind " + filepath.Join(want.Dir, "workspace") + " -> /workspace ro=false",
		"named " + want.HomeVolume + " -> /home/dev ro=false",
		"owned disk 8192MiB -> /var/lib/containers",
	}
	if !slices.Equal(mounts, wantMounts) {
		t.Errorf("mounts:\n  %s\nwant:\n  %s", strings.Join(mounts, "\n  "), strings.Join(wantMounts, "\n  "))
	}

	// Egress: deny, with one allow rule per host.
	pol := cfg.Network.Policy
	if pol.DefaultEgress != "deny" {
		t.Errorf("default_egress = %q, want deny", pol.DefaultEgress)
	}
	var rules, wantRules []string
	for _, r := range pol.Rules {
		rules = append(rules, fmt.Sprintf("%s %s %s%s", r.Action, r.Direction, r.Destination.Domain, r.Destination.Group))
	}
	for _, h := range want.Allow {
		wantRules = append(wantRules, "allow egress "+h)
	}
	slices.Sort(rules)
	slices.Sort(wantRules)
	if !slices.Equal(rules, wantRules) {
		t.Errorf("network rules = %q, want %q", rules, wantRules)
	}

	// Secrets: env references only, each bound to its own hosts.
	secrets := map[string]string{}
	for _, s := range cfg.Network.Secrets.Secrets {
		var hosts []string
		for _, h := range s.AllowedHosts {
			hosts = append(hosts, h.Exact)
		}
		if s.Source.Kind != "env" || s.Source.Var != s.EnvVar {
			t.Errorf("secret %s: source %+v, want kind env, var %s", s.EnvVar, s.Source, s.EnvVar)
		}
		if s.Value == nil || *s.Value != "" {
			t.Errorf("secret %s: value %v, want \"\" (the value stays in the environment)", s.EnvVar, s.Value)
		}
		secrets[s.EnvVar] = strings.Join(hosts, ",")
	}
	if !maps.Equal(secrets, want.Secrets) {
		t.Errorf("secrets = %v, want %v", secrets, want.Secrets)
	}
}

// NoValueOnDisk fails the test if any regular file under root (an SQLite
// database, a disk image) holds one of values.
func NoValueOnDisk(t testing.TB, root string, values ...string) {
	t.Helper()
	start := time.Now()
	n := 0
	var scanned int64
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		n++
		for _, v := range values {
			found, read, err := FileContains(p, []byte(v))
			if err != nil {
				return err
			}
			scanned += read
			if found {
				t.Errorf("%s holds a secret's value", p)
			}
		}
		return nil
	})
	if err != nil {
		t.Errorf("scan %s: %v", root, err)
	}
	if n == 0 {
		t.Errorf("scanned no file under %s: the check would prove nothing", root)
	}
	t.Logf("no secret value in the %d files under %s (%d KiB of data read, %v)", n, root, scanned>>10, time.Since(start).Round(time.Millisecond))
}

// Linux's lseek whence values for sparse files (macOS swaps them).
const (
	seekData = 3
	seekHole = 4
)

// FileContains reports whether the file at p holds needle, and how many
// bytes it read. msb's disks are large sparse files (an 8 GiB container
// disk, a 4 GiB root overlay): on Linux only their data extents are read,
// since holes read as zeros.
func FileContains(p string, needle []byte) (found bool, read int64, err error) {
	f, err := os.Open(p)
	if err != nil {
		return false, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, 0, err
	}
	size := fi.Size()
	type extent struct{ off, end int64 }
	extents := []extent{{0, size}}
	if runtime.GOOS == "linux" {
		extents = nil
		for off := int64(0); off < size; {
			data, err := f.Seek(off, seekData)
			if err != nil { // ENXIO: no data after off (or no SEEK_DATA: see below)
				break
			}
			hole, err := f.Seek(data, seekHole)
			if err != nil {
				hole = size
			}
			extents = append(extents, extent{data, hole})
			off = hole
		}
		if len(extents) == 0 && size > 0 {
			// Either all hole, or SEEK_DATA is unsupported: check which.
			if _, err := f.Seek(0, seekData); err != nil && !errors.Is(err, syscall.ENXIO) {
				extents = []extent{{0, size}}
			}
		}
	}
	buf := make([]byte, 1<<20)
	for _, e := range extents {
		var carry []byte
		for off := e.off; off < e.end; {
			m := int(min(int64(len(buf)), e.end-off))
			k, err := f.ReadAt(buf[:m], off)
			if k == 0 && err != nil {
				return false, read, err
			}
			read += int64(k)
			chunk := append(carry, buf[:k]...)
			if bytes.Contains(chunk, needle) {
				return true, read, nil
			}
			carry = append([]byte(nil), chunk[max(0, len(chunk)-len(needle)+1):]...)
			off += int64(k)
		}
	}
	return false, read, nil
}
