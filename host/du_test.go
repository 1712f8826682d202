//go:build unix

package host

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// DiskUsage agrees with du -sB1, hard links counted once, a sparse file
// by its allocated blocks.
func TestDiskUsageMatchesDu(t *testing.T) {
	du, err := exec.LookPath("du")
	if err != nil {
		t.Skip("no du here to compare with")
	}
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "a", "b", "f"), make([]byte, 100_000), 0o644))
	must(os.Link(filepath.Join(dir, "a", "b", "f"), filepath.Join(dir, "a", "g")))
	sparse, err := os.Create(filepath.Join(dir, "sparse"))
	must(err)
	must(sparse.Truncate(1 << 30))
	must(sparse.Close())
	must(os.Symlink("/usr", filepath.Join(dir, "link")))
	out, err := exec.Command(du, "-sB1", dir).Output()
	must(err)
	want, err := strconv.ParseInt(strings.Fields(string(out))[0], 10, 64)
	must(err)
	got, err := DiskUsage(dir)
	must(err)
	if got != want {
		t.Errorf("DiskUsage = %d, du -sB1 says %d", got, want)
	}
	if got >= 1<<30 || got < 100_000 {
		t.Errorf("DiskUsage = %d: the sparse file or the linked one is miscounted", got)
	}
	if n, err := DiskUsage(filepath.Join(dir, "missing")); err != nil || n != 0 {
		t.Errorf("a missing path: %d, %v", n, err)
	}
}
