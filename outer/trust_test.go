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
	if err := ApproveEdit(dir, &Verdict{Trusted: true}, Judge{Getenv: none}); err != nil {
		t.Errorf("ApproveEdit without a store: %v", err)
	}
}

// A top-level link to a folder inside the outer folder (a bind's source)
// stands in the set by its target, so pointing it elsewhere needs a new
// approval; a link to a file, out of the folder or to nothing is refused,
// since what would be read through it is not in the set.
func TestTrustSetLinks(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"real", "other"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "Taskfile.yml"), []byte("version: '3'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "data")
	if err := os.Symlink("real", link); err != nil {
		t.Fatal(err)
	}
	a, err := ReadTrustSet(dir)
	if err != nil {
		t.Fatalf("a link to a folder inside: %v", err)
	}
	if got := string(a.Files["data"]); got != "(a link to the folder real)\n" {
		t.Errorf("the link stands as %q", got)
	}
	repoint := func(target string) {
		t.Helper()
		if err := os.Remove(link); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	repoint("other")
	if b, err := ReadTrustSet(dir); err != nil || b.Hash() == a.Hash() {
		t.Errorf("a link pointed at another folder: err %v, hash unchanged %v", err, err == nil && b.Hash() == a.Hash())
	}
	for _, target := range []string{"Taskfile.yml", t.TempDir(), "missing"} {
		repoint(target)
		if _, err := ReadTrustSet(dir); err == nil || !strings.Contains(err.Error(), "data is a link (to "+target+") that leads to a file, out of the outer folder or nowhere") {
			t.Errorf("a link to %s: %v", target, err)
		}
	}
}

// TestTrustSetTreesIgnoreCase: a committed Toolchain/ is the builder's
// toolchain/ on a file system that ignores case; .asb-base/ is in the set
// (asb update merges against it).
func TestTrustSetTreesIgnoreCase(t *testing.T) {
	dir := t.TempDir()
	for rel, content := range map[string]string{
		"sandbox.yaml":                              "image: x\n",
		"Toolchain/Dockerfile":                      "FROM evil.example/x:1\n",
		".asb-base/sandbox.yaml":                    "image: x\n",
		"Toolchain/certs/host-0123456789abcdef.crt": "pem\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := ReadTrustSet(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Toolchain/Dockerfile", ".asb-base/sandbox.yaml", "Toolchain/certs/host-0123456789abcdef.crt"} {
		if _, ok := s.Files[want]; !ok {
			t.Errorf("%s is not in the set: %v", want, s.names())
		}
	}
}
