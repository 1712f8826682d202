package outer

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agents-sandbox/asb/schema"
)

// A build context may hold files larger than asb reads whole (a static
// binary): the set stands for each by its size and digest, so a change to
// one still changes the hash, and nothing is read into memory whole.
func TestTrustSetLargeFiles(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "toolchain", "rootfs", "bin", "busybox")
	if err := os.MkdirAll(filepath.Dir(big), 0o755); err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("x"), schema.MaxFileSize+10)
	if err := os.WriteFile(big, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Taskfile.yml"), []byte("version: '3'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := ReadTrustSet(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(a.Files["toolchain/rootfs/bin/busybox"]); !strings.HasPrefix(got, "(a file of 1048586 bytes, sha256 ") {
		t.Errorf("large file stands as %q", got)
	}
	data[len(data)-1] = 'y'
	if err := os.WriteFile(big, data, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := ReadTrustSet(dir)
	if err != nil {
		t.Fatal(err)
	}
	if a.Hash() == b.Hash() {
		t.Error("a change at the end of a large file left the hash as it was")
	}
	// Secrets.env and the other untrusted files are not in the set.
	if err := os.WriteFile(filepath.Join(dir, "secrets.env"), []byte("A=1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := ReadTrustSet(dir)
	if err != nil {
		t.Fatal(err)
	}
	if c.Hash() != b.Hash() {
		t.Error("secrets.env changed the trust hash")
	}
}

// Without $HOME or $XDG_STATE_HOME there is no store: a render-identical
// folder is still trusted, an edit's approval is skipped (no panic), and a
// changed folder is an error that says where approvals would live.
func TestTrustWithoutStateFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "f")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Taskfile.yml"), []byte("version: '3'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	none := func(string) string { return "" }
	// No asb.yaml: nothing renders, so nothing is trusted, and without a
	// store that is an error naming the missing folder.
	if _, err := CheckTrust(dir, nil, none); err == nil || !strings.Contains(err.Error(), "XDG_STATE_HOME") {
		t.Errorf("CheckTrust without a store: %v", err)
	}
	if err := ApproveEdit(dir, &Verdict{Trusted: true}, none); err != nil {
		t.Errorf("ApproveEdit without a store: %v", err)
	}
}
