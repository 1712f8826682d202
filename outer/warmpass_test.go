package outer

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// passFolder is an approved folder with a settled, cached verdict, a file
// of the caller's to stamp, and the pass a run would keep.
func passFolder(t *testing.T) (string, Judge, *WarmPass) {
	t.Helper()
	dir, j := cacheFolder(t)
	extra := filepath.Join(dir, ".asb", "state.yaml")
	if err := os.MkdirAll(filepath.Dir(extra), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(extra, []byte("home_volume: v\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	settle(t, dir, j)
	return dir, j, &WarmPass{Vars: map[string]string{"VM": "demo-vm", "SLUG": "it's \"quoted\"\n"}, Sum: "abc123",
		Refs: []string{"API_KEY", "OTHER"}, EnvMAC: "m4c", Files: []string{extra, filepath.Join(dir, "absent.yaml")}}
}

func keep(dir string, j Judge, p *WarmPass) {
	j.SaveWarmPass(dir, "run-a", p, time.Now().UnixNano())
}

// TestWarmPassKeepsTheDecisions: a kept pass is read back whole for its
// own run, and not for another.
func TestWarmPassKeepsTheDecisions(t *testing.T) {
	dir, j, p := passFolder(t)
	keep(dir, j, p)
	got := j.LoadWarmPass(dir, "run-a")
	if got == nil {
		t.Fatal("no pass read back")
	}
	if got.Sum != p.Sum || got.EnvMAC != p.EnvMAC || !slices.Equal(got.Refs, p.Refs) || len(got.Vars) != 2 ||
		got.Vars["VM"] != "demo-vm" || got.Vars["SLUG"] != p.Vars["SLUG"] {
		t.Errorf("read back %+v, want %+v", got, p)
	}
	for _, f := range append([]string{filepath.Join(dir, "sandbox.yaml")}, p.Files...) {
		if _, ok := got.stamps[f]; !ok {
			t.Errorf("the pass keeps no stamp of %s", f)
		}
	}
	if j.LoadWarmPass(dir, "run-b") != nil {
		t.Error("another run took run-a's pass")
	}
}

// TestWarmPassNoticesEveryChange: any change to what the decisions read
// (a file of the trust set, a file of the caller's, one that appears,
// the approval, a policy file) makes the pass none.
func TestWarmPassNoticesEveryChange(t *testing.T) {
	later := time.Now().Add(time.Second)
	for name, change := range map[string]func(t *testing.T, dir string, j Judge){
		"trust set file": func(t *testing.T, dir string, _ Judge) {
			appendTo(t, filepath.Join(dir, "sandbox.yaml"), "# edited\n")
		},
		"touched, same content": func(t *testing.T, dir string, _ Judge) {
			if err := os.Chtimes(filepath.Join(dir, "opencode", "opencode.json"), later, later); err != nil {
				t.Fatal(err)
			}
		},
		"caller's file": func(t *testing.T, dir string, _ Judge) {
			appendTo(t, filepath.Join(dir, ".asb", "state.yaml"), "# x\n")
		},
		"a file that appears": func(t *testing.T, dir string, _ Judge) {
			appendTo(t, filepath.Join(dir, "absent.yaml"), "x: 1\n")
		},
		// The folder has no git: every file below the top counts, those
		// added to a folder below it and to .asb/ too.
		"a file added below the top": func(t *testing.T, dir string, _ Judge) {
			writeFile(t, dir, ".schemas/lint.sh", "curl x | sh\n")
		},
		"a file added to .asb/": func(t *testing.T, dir string, _ Judge) {
			writeFile(t, dir, ".asb/lint.sh", "curl x | sh\n")
		},
		"approval revoked": func(t *testing.T, dir string, j Judge) {
			store, err := ApprovalStore(j.getenv)
			if err != nil {
				t.Fatal(err)
			}
			if ok, err := store.Revoke(dir); !ok || err != nil {
				t.Fatalf("revoke: %v, %v", ok, err)
			}
		},
		"user policy": func(t *testing.T, _ string, j Judge) {
			writeUserPolicy(t, j, "network_modes: [none, allowlist]\n")
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir, j, p := passFolder(t)
			keep(dir, j, p)
			if j.LoadWarmPass(dir, "run-a") == nil {
				t.Fatal("no pass before the change")
			}
			change(t, dir, j)
			if j.LoadWarmPass(dir, "run-a") != nil {
				t.Error("the pass held after the change")
			}
		})
	}
}

// TestWarmPassKeptOnlyWhenSure: no pass is kept from a file that had just
// changed when the decisions began, nor without a cached verdict that
// holds; a damaged pass is none.
func TestWarmPassKeptOnlyWhenSure(t *testing.T) {
	dir, j, p := passFolder(t)
	appendTo(t, p.Files[0], "# just now\n")
	j.SaveWarmPass(dir, "run-a", p, time.Now().Add(-racyNs/2).UnixNano())
	if j.LoadWarmPass(dir, "run-a") != nil {
		t.Error("a pass was kept from a file changed as the decisions began")
	}

	dir, j, p = passFolder(t)
	store, _ := ApprovalStore(j.getenv)
	if err := os.Remove(store.cachePath(dir)); err != nil {
		t.Fatal(err)
	}
	keep(dir, j, p)
	if j.LoadWarmPass(dir, "run-a") != nil {
		t.Error("a pass was kept without a cached verdict")
	}

	dir, j, p = passFolder(t)
	keep(dir, j, p)
	path, _, err := j.warmPassPath(dir, "run-a")
	if err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string]string{
		"truncated":      string(good[:len(good)-3]),
		"unknown line":   string(good) + "trusted yes\n",
		"field too many": strings.Replace(string(good), "\nsum \"abc123\"\n", "\nsum \"abc123\" 1\n", 1),
		"another format": strings.Replace(string(good), warmPassFormat, "asb-warm-pass 0", 1),
		"bad stamp":      strings.Replace(string(good), " false\n", " maybe\n", 1),
	} {
		if bad == string(good) {
			t.Fatalf("%s: the damage changed nothing", name)
		}
		if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if j.LoadWarmPass(dir, "run-a") != nil {
			t.Errorf("%s: a damaged pass was taken", name)
		}
	}
}
