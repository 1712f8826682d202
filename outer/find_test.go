package outer

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
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

// TestFindRefusesAFolderTheVMWrote: a sandbox.yaml the agent wrote in
// workspace/ (or a session's checkout) does not make asb, run there, act
// on the agent's folder; -d still names one on purpose.
func TestFindRefusesAFolderTheVMWrote(t *testing.T) {
	root := t.TempDir()
	outer := filepath.Join(root, "proj")
	for _, planted := range []string{"workspace", "workspace/sub", ".asb/sessions/one/workspace"} {
		in := filepath.Join(outer, filepath.FromSlash(planted))
		if err := os.MkdirAll(filepath.Join(in, "src"), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, d := range []string{outer, in} {
			if err := os.WriteFile(filepath.Join(d, "sandbox.yaml"), []byte("image: x\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, err := Find(filepath.Join(in, "src"))
		if err == nil || !strings.Contains(err.Error(), "which the agent's VM writes") {
			t.Errorf("Find below a planted %s/sandbox.yaml: %v, want a refusal", planted, err)
		}
		if got, err := Resolve(root, in); err != nil || got != in {
			t.Errorf("-d %s: %q, %v", planted, got, err)
		}
		if err := os.Remove(filepath.Join(in, "sandbox.yaml")); err != nil {
			t.Fatal(err)
		}
		if got, err := Find(filepath.Join(in, "src")); err != nil || got != outer {
			t.Errorf("Find below %s without a planted file = %q, %v; want %q", planted, got, err, outer)
		}
	}
	// An outer folder beside another's workspace is no VM's.
	beside := filepath.Join(outer, "tools")
	if err := os.MkdirAll(beside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(beside, "sandbox.yaml"), []byte("image: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := Find(beside); err != nil || got != beside {
		t.Errorf("Find(%s) = %q, %v", beside, got, err)
	}
}
