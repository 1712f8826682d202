package generator

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "secrets.env")
	if err := WriteFileAtomic(p, []byte("# A=\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(p, []byte("# A=\n# B=\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	fi, _ := os.Stat(p)
	if string(got) != "# A=\n# B=\n" || fi.Mode().Perm() != 0o600 {
		t.Errorf("got %q mode %o", got, fi.Mode().Perm())
	}
	assertOnly(t, dir, "secrets.env")
}

func TestWriteFilesAtomicAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.yaml")
	if err := os.WriteFile(a, []byte("old a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The second target is a folder: refused before anything is renamed.
	b := filepath.Join(dir, "b")
	if err := os.MkdirAll(filepath.Join(b, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := WriteFilesAtomic([]PendingFile{{Path: a, Data: []byte("new a\n"), Mode: 0o644}, {Path: b, Data: []byte("b"), Mode: 0o644}})
	if err == nil {
		t.Fatal("writing over a folder succeeded")
	}
	if got, _ := os.ReadFile(a); string(got) != "old a\n" {
		t.Errorf("a.yaml = %q after a failed write, want the old content", got)
	}
	assertOnly(t, dir, "a.yaml", "b")

	// A missing folder fails at staging time: nothing changes either.
	c := filepath.Join(dir, "new.yaml")
	err = WriteFilesAtomic([]PendingFile{{Path: c, Data: []byte("c"), Mode: 0o644}, {Path: filepath.Join(dir, "nope", "d"), Data: []byte("d"), Mode: 0o644}})
	if err == nil {
		t.Fatal("writing into a missing folder succeeded")
	}
	assertOnly(t, dir, "a.yaml", "b")
}

// assertOnly checks that dir holds exactly names: no temporary file is left.
func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if len(got) != len(names) {
		t.Fatalf("%s holds %v, want %v", dir, got, names)
	}
	for i := range got {
		if got[i] != names[i] {
			t.Fatalf("%s holds %v, want %v", dir, got, names)
		}
	}
}
