package host

import (
	"fmt"
	"path/filepath"
	"strings"
)

// CheckDiskLimits is the pre-boot check of the folder's disk limits.
const CheckDiskLimits = "disk for the limits"

// DiskNeed is room a VM may take on the file system of Path: its root disk
// and container disk under MSB_HOME, the workspace quota in the folder.
// msb's disks are sparse and grow as the VM writes, so nothing is taken at
// once; the check makes sure the limits, not the host's disk, are what
// stops a runaway VM.
type DiskNeed struct {
	Path  string
	Bytes uint64
	What  string // e.g. "root disk 4G + container disk 8G"
}

// MSBHome is msb's state folder: $MSB_HOME, else ~/.microsandbox.
func MSBHome(h Host) string {
	if d := h.Getenv("MSB_HOME"); d != "" {
		return d
	}
	if home := h.Getenv("HOME"); home != "" {
		return filepath.Join(home, ".microsandbox")
	}
	return ""
}

// DiskLimits checks that each need fits in the free space of its file
// system (a folder that does not exist yet is judged by its nearest
// existing parent). Needs on one file system add up.
func DiskLimits(h Host, needs []DiskNeed) Check {
	c := Check{Name: CheckDiskLimits, Status: StatusOK, Blocking: true}
	type fsNeed struct {
		free  uint64
		bytes uint64
		what  []string
	}
	// Keyed by the free bytes, which tell file systems apart (two that
	// happen to have the same free bytes are added up: stricter, not
	// looser).
	var order []uint64
	byFS := map[uint64]*fsNeed{}
	paths := map[uint64]string{}
	for _, n := range needs {
		if n.Bytes == 0 || n.Path == "" {
			continue
		}
		free, err := freeNear(h, n.Path)
		if err != nil {
			c.Status, c.Detail = StatusWarn, "cannot tell the free space of "+n.Path+": "+err.Error()
			c.Blocking = false
			return c
		}
		f, ok := byFS[free]
		if !ok {
			f = &fsNeed{free: free}
			byFS[free], paths[free] = f, n.Path
			order = append(order, free)
		}
		f.bytes += n.Bytes
		f.what = append(f.what, n.What)
	}
	var details []string
	for _, free := range order {
		f := byFS[free]
		d := fmt.Sprintf("%s may take %s of the %s free in %s", strings.Join(f.what, " + "), humanBytes(f.bytes), humanBytes(f.free), paths[free])
		details = append(details, d)
		if f.bytes > f.free {
			c.Status = StatusFail
			c.Fix = "free up space there, or lower the limits (asb limit set root-disk 4G, container-disk 2G, workspace-quota 2G)" + skipHint
		}
	}
	if len(details) == 0 {
		c.Detail = "no disk limits set"
	} else {
		c.Detail = strings.Join(details, "; ")
	}
	return c
}

// freeNear is the free space of p's file system, or of its nearest
// existing parent.
func freeNear(h Host, p string) (uint64, error) {
	for {
		if _, err := h.Stat(p); err == nil {
			return h.FreeDisk(p)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return h.FreeDisk(p)
		}
		p = parent
	}
}
