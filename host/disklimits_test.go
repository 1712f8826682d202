package host

import (
	"path/filepath"
	"strings"
	"testing"
)

// diskHost is this host with made-up free space per folder.
type diskHost struct {
	SystemHost
	free map[string]uint64
}

func (h diskHost) FreeDisk(p string) (uint64, error) { return h.free[p], nil }

func TestDiskLimits(t *testing.T) {
	msbHome, folder := t.TempDir(), t.TempDir()
	const gib = 1 << 30
	vm := DiskNeed{Path: filepath.Join(msbHome, "not-yet"), Bytes: 12 * gib, What: "root-disk 4G + container-disk 8G"}
	ws := DiskNeed{Path: folder, Bytes: 20 * gib, What: "workspace-quota 20G"}
	for _, tc := range []struct {
		name       string
		free       map[string]uint64
		needs      []DiskNeed
		status     Status
		detail     string
		fixMention string
	}{
		{"room", map[string]uint64{msbHome: 50 * gib, folder: 30 * gib}, []DiskNeed{vm, ws}, StatusOK,
			"root-disk 4G + container-disk 8G may take 12.0 GiB of the 50.0 GiB free in " + vm.Path, ""},
		{"root and container disk do not fit", map[string]uint64{msbHome: 10 * gib, folder: 30 * gib}, []DiskNeed{vm, ws}, StatusFail,
			"may take 12.0 GiB of the 10.0 GiB free", "asb limit set"},
		{"one file system: the needs add up", map[string]uint64{msbHome: 25 * gib, folder: 25 * gib}, []DiskNeed{vm, ws}, StatusFail,
			"root-disk 4G + container-disk 8G + workspace-quota 20G may take 32.0 GiB of the 25.0 GiB free", "ASB_SKIP_HOST_CHECK=1"},
		{"no limits", nil, []DiskNeed{{Path: folder}}, StatusOK, "no disk limits set", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DiskLimits(diskHost{free: tc.free}, tc.needs)
			if c.Status != tc.status || !strings.Contains(c.Detail, tc.detail) || !strings.Contains(c.Fix, tc.fixMention) {
				t.Errorf("DiskLimits = %+v, want status %s, detail with %q, fix with %q", c, tc.status, tc.detail, tc.fixMention)
			}
			if c.Status == StatusFail && !c.Blocking {
				t.Errorf("a failed disk check must block the boot")
			}
		})
	}
}

func TestMSBHome(t *testing.T) {
	env := map[string]string{"HOME": "/home/u"}
	h := fakeEnvHost{env: env}
	if got := MSBHome(h); got != "/home/u/.microsandbox" {
		t.Errorf("MSBHome = %q", got)
	}
	env["MSB_HOME"] = "/srv/msb"
	if got := MSBHome(h); got != "/srv/msb" {
		t.Errorf("MSBHome with MSB_HOME = %q", got)
	}
}

type fakeEnvHost struct {
	SystemHost
	env map[string]string
}

func (h fakeEnvHost) Getenv(k string) string { return h.env[k] }
