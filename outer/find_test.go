package outer

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestFind(t *testing.T) {
	root := t.TempDir()
	outer := filepath.Join(root, "proj")
	deep := filepath.Join(outer, "workspace", "src", "pkg")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outer, "sandbox.yaml"), []byte("image: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, start := range []string{outer, deep, filepath.Join(outer, "workspace")} {
		got, err := Find(start)
		if err != nil || got != outer {
			t.Errorf("Find(%s) = %q, %v; want %q", start, got, err, outer)
		}
	}
	// A folder named sandbox.yaml does not count.
	other := filepath.Join(root, "other")
	if err := os.MkdirAll(filepath.Join(other, "sandbox.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Find(other)
	var nf *NotFoundError
	if !errors.As(err, &nf) || nf.Start != other {
		t.Errorf("Find(%s) error = %v, want NotFoundError", other, err)
	}
}

func TestResolve(t *testing.T) {
	root := t.TempDir()
	outer := filepath.Join(root, "proj")
	if err := os.MkdirAll(filepath.Join(outer, "workspace"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outer, "sandbox.yaml"), []byte("image: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := Resolve(root, "proj"); err != nil || got != outer {
		t.Errorf("Resolve(root, proj) = %q, %v", got, err)
	}
	if got, err := Resolve(filepath.Join(outer, "workspace"), ""); err != nil || got != outer {
		t.Errorf("Resolve(workspace, \"\") = %q, %v", got, err)
	}
	// --dir must be the outer folder itself, not a folder below it.
	if _, err := Resolve(root, "proj/workspace"); err == nil {
		t.Error("Resolve(proj/workspace) succeeded; want an error")
	}
}
