package schema_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agents-sandbox/asb/schema"
)

// TestSizeCap: a file over 1 MiB is refused with the limit in the message,
// by validate, without being read whole.
func TestSizeCap(t *testing.T) {
	dir := t.TempDir()
	big := append([]byte("image: x\n"), bytes.Repeat([]byte("# padding padding padding padding\n"), 40<<10)...) // ~1.4 MB
	if err := os.WriteFile(filepath.Join(dir, "sandbox.yaml"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	probs := schema.CheckDir(dir, schema.CheckOptions{Getenv: func(string) string { return "" }, Tracked: func(string) (bool, error) { return false, nil }})
	found := false
	for _, p := range probs {
		if p.File == "sandbox.yaml" && strings.Contains(p.Msg, "larger than 1048576 bytes (1 MiB)") {
			found = true
		}
	}
	if !found {
		t.Fatalf("a 1.4 MB sandbox.yaml: %v", probs)
	}
	if _, err := schema.ReadFile(filepath.Join(dir, "sandbox.yaml")); err == nil {
		t.Error("ReadFile read a 1.4 MB file")
	}
	small := filepath.Join(dir, "small")
	os.WriteFile(small, []byte("x"), 0o644)
	if b, err := schema.ReadFile(small); err != nil || string(b) != "x" {
		t.Errorf("ReadFile(small) = %q, %v", b, err)
	}
}
