package generator

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agents-sandbox/asb/internal/folderfs"
)

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "secrets.env")
	if err := WriteFileAtomic(dir, "secrets.env", []byte("# A=\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(dir, "secrets.env", []byte("# A=\n# B=\n"), 0o600); err != nil {
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
	err := WriteFilesAtomic(dir, []PendingFile{{Path: "a.yaml", Data: []byte("new a\n"), Mode: 0o644}, {Path: "b", Data: []byte("b"), Mode: 0o644}})
	if err == nil {
		t.Fatal("writing over a folder succeeded")
	}
	if got, _ := os.ReadFile(a); string(got) != "old a\n" {
		t.Errorf("a.yaml = %q after a failed write, want the old content", got)
	}
	assertOnly(t, dir, "a.yaml", "b")

	// A path through a file fails at staging time: nothing changes either.
	err = WriteFilesAtomic(dir, []PendingFile{{Path: "new.yaml", Data: []byte("c"), Mode: 0o644}, {Path: "a.yaml/d", Data: []byte("d"), Mode: 0o644}})
	if err == nil {
		t.Fatal("writing under a file succeeded")
	}
	assertOnly(t, dir, "a.yaml", "b")
}

// A committed link out of the folder is never written through: not as the
// target, not as a folder on the way.
func TestWriteRefusesLinksOut(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "toolchain")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "victim"), filepath.Join(dir, "sandbox.yaml")); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"toolchain/Dockerfile", "toolchain/new/deep.yaml"} {
		err := WriteFileAtomic(dir, rel, []byte("x"), 0o644)
		var esc *folderfs.EscapeError
		if !errors.As(err, &esc) || !strings.Contains(err.Error(), "leads out of the outer folder") {
			t.Errorf("write %s: err = %v, want an EscapeError", rel, err)
		}
	}
	// A link as the target itself: refused as not a regular file.
	if err := WriteFileAtomic(dir, "sandbox.yaml", []byte("x"), 0o644); err == nil {
		t.Error("a write over a link succeeded")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("the folder outside got %d entries", len(entries))
	}
	assertOnly(t, dir, "sandbox.yaml", "toolchain")
}

// A killed write's staging files are removed by the next look for them; a
// live write's (its file still open, so locked) are not, whatever lock the
// looker holds: it would fail that write's rename.
func TestStagingFilesAre0600AndCleaned(t *testing.T) {
	dir := t.TempDir()
	r, err := folderfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	live, err := stageTemp(r, "secrets.env", []byte("A=1\n"), 0o644, false)
	if err != nil {
		t.Fatal(err)
	}
	// Before its final chmod a staging file is 0600; a killed write leaves
	// it so (its descriptor closed by the kernel), and the next command
	// removes it.
	f, killed, err := r.CreateTemp("secrets.env")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if fi, _ := os.Stat(filepath.Join(dir, killed)); fi.Mode().Perm() != 0o600 {
		t.Errorf("staging file mode %o, want 600", fi.Mode().Perm())
	}
	removed, err := CleanStaging(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(removed, []string{killed}) {
		t.Errorf("CleanStaging removed %v, want only the killed write's %s", removed, killed)
	}
	if err := live.place(r, "secrets.env"); err != nil {
		t.Fatalf("the live write's rename: %v", err)
	}
	assertOnly(t, dir, "secrets.env")

	// A write killed between staging and renaming.
	live, err = stageTemp(r, "secrets.env", []byte("A=2\n"), 0o644, false)
	if err != nil {
		t.Fatal(err)
	}
	live.f.Close()
	if removed, err = CleanStaging(dir); err != nil || !slices.Equal(removed, []string{live.name}) {
		t.Errorf("CleanStaging removed %v (%v), want %s", removed, err, live.name)
	}
	assertOnly(t, dir, "secrets.env")
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
