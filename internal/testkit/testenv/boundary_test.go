package testenv

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestFileContains(t *testing.T) {
	const canary, other = "asb-canary-github-2b8d4e6f", "asb-canary-opencode-7f3c9a1e"
	dir := t.TempDir()
	sparse := filepath.Join(dir, "disk.raw")
	f, err := os.Create(sparse)
	if err != nil {
		t.Fatal(err)
	}
	// The canary straddles the 65 MiB offset (a read-chunk border), after a 64 MiB hole.
	const off = 64<<20 + 1<<20 - 5
	if _, err := f.WriteAt([]byte("xx"+canary+"yy"), off); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	found, read, err := FileContains(sparse, []byte(canary))
	if err != nil || !found {
		t.Errorf("FileContains(sparse file with the canary) = %v, %v", found, err)
	}
	if found, _, _ := FileContains(sparse, []byte(other)); found {
		t.Error("found a needle that is not there")
	}
	t.Logf("read %d KiB of a 1 GiB sparse file", read>>10)
	if runtime.GOOS == "linux" && read > 64<<20 {
		t.Errorf("read %d bytes: holes were read", read)
	}
}
