package runner

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func TestIdentityClonesWorktreesAndState(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	base := t.TempDir()
	a := filepath.Join(base, "My Project")
	if err := os.Mkdir(a, 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, a, "init", "-q")
	git(t, a, "commit", "-q", "--allow-empty", "-m", "x")
	b := filepath.Join(base, "clone2", "My Project")
	if err := os.MkdirAll(filepath.Dir(b), 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, base, "clone", "-q", a, b)
	wt := filepath.Join(base, "feature-wt")
	git(t, a, "worktree", "add", "-q", wt)

	now := time.Date(2026, 12, 2, 15, 4, 5, 0, time.UTC)
	ida, err := ResolveIdentity(a, "opencode", IdentityOptions{Now: now, Record: true})
	if err != nil {
		t.Fatal(err)
	}
	idb, err := ResolveIdentity(b, "opencode", IdentityOptions{Now: now, Record: false})
	if err != nil {
		t.Fatal(err)
	}
	idw, err := ResolveIdentity(wt, "opencode", IdentityOptions{Now: now, Record: false})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ida.Slug, "my-project-") || len(ida.Slug) != len("my-project-")+8 {
		t.Errorf("slug %q is not the sanitized folder name and 8 hex digits", ida.Slug)
	}
	if ida.VM == idb.VM {
		t.Errorf("two clones share the VM %q", ida.VM)
	}
	if idw.Slug != ida.Slug {
		t.Errorf("a worktree (%q) does not share its clone's slug (%q)", idw.Slug, ida.Slug)
	}
	want := Identity{Slug: ida.Slug, Agent: "opencode", VM: ida.Slug + "-opencode",
		HomeVolume: ida.Slug + "-opencode-20261202-150405", Image: ida.Slug + ":opencode-latest",
		BuildTag: "agents-sandbox/runner-" + ida.Slug + ":opencode-latest"}
	if ida != want {
		t.Errorf("identity\n %+v\nwant\n %+v", ida, want)
	}
	// The home volume is recorded once and kept, whatever the clock says.
	later, err := ResolveIdentity(a, "opencode", IdentityOptions{Now: now.Add(48 * time.Hour), Record: true})
	if err != nil {
		t.Fatal(err)
	}
	if later.HomeVolume != ida.HomeVolume {
		t.Errorf("the recorded home volume changed: %q → %q", ida.HomeVolume, later.HomeVolume)
	}
	// Not recording leaves no state behind.
	if _, err := os.Stat(filepath.Join(b, StatePath)); err == nil {
		t.Errorf("ResolveIdentity(record=false) wrote %s", StatePath)
	}
	// A damaged or hostile state file is refused, not used.
	if err := os.WriteFile(filepath.Join(a, StatePath), []byte("home_volume: \"x; rm -rf /\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ResolveIdentity(a, "opencode", IdentityOptions{Now: now, Record: true}); err == nil || !strings.Contains(err.Error(), "not a valid volume name") {
		t.Errorf("a hostile home_volume was accepted: %v", err)
	}
}

// TestLostStateKeepsTheHome: when .asb/state.yaml is deleted or damaged,
// this clone's home volume is found again among msb's volumes (the newest
// of them) instead of a new, empty one being made; a volume of another
// clone or agent is never taken.
func TestLostStateKeepsTheHome(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "proj")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	id, err := ResolveIdentity(dir, "opencode", IdentityOptions{Now: now.Add(-72 * time.Hour), Record: true})
	if err != nil {
		t.Fatal(err)
	}
	older := id.VM + "-20261101-101010"
	vols := []string{"other-12345678-opencode-20261201-000000", id.VM + "-notatimestamp", older, id.HomeVolume,
		strings.TrimSuffix(id.VM, "opencode") + "codex-20261202-000000"}
	list := func() ([]string, error) { return vols, nil }
	for _, damage := range []string{"delete", "garbage", "hostile"} {
		t.Run(damage, func(t *testing.T) {
			p := filepath.Join(dir, StatePath)
			switch damage {
			case "delete":
				os.Remove(p)
			case "garbage":
				os.WriteFile(p, []byte("{{{ not yaml"), 0o644)
			case "hostile":
				os.WriteFile(p, []byte("home_volume: \"x; rm -rf /\"\n"), 0o644)
			}
			var said []string
			got, err := ResolveIdentity(dir, "opencode", IdentityOptions{Now: now, Record: true, Volumes: list, Say: func(s string) { said = append(said, s) }})
			if err != nil {
				t.Fatal(err)
			}
			if got.HomeVolume != id.HomeVolume {
				t.Errorf("home volume %q, want the clone's existing %q", got.HomeVolume, id.HomeVolume)
			}
			if len(said) != 1 || !strings.Contains(said[0], "found this clone's home volume "+id.HomeVolume) || !strings.Contains(said[0], "the newest of 2") {
				t.Errorf("said %q", said)
			}
			st, err := ReadState(dir)
			if err != nil || st.HomeVolume != id.HomeVolume {
				t.Errorf("not recorded again: %+v %v", st, err)
			}
		})
	}
	// No volume of this clone in msb: a new one, and nothing said.
	os.Remove(filepath.Join(dir, StatePath))
	var said []string
	got, err := ResolveIdentity(dir, "opencode", IdentityOptions{Now: now, Record: true,
		Volumes: func() ([]string, error) { return vols[:1], nil }, Say: func(s string) { said = append(said, s) }})
	if err != nil || got.HomeVolume != id.VM+"-20261203-090000" || len(said) != 0 {
		t.Errorf("no volume to find: %q, %v, said %q", got.HomeVolume, err, said)
	}
}

// TestForeignHomeVolumeIsIgnored: a state file naming a volume that is not
// one of this clone's VM (a copy of another folder's .asb/, say) is never
// mounted: this clone's own is found in msb, or a new one named, and the
// user is told.
func TestForeignHomeVolumeIsIgnored(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "proj")
	if err := os.MkdirAll(filepath.Join(dir, ".asb"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, StatePath), []byte("home_volume: other-12345678-opencode-20261201-000000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	var said []string
	id, err := ResolveIdentity(dir, "opencode", IdentityOptions{Now: now, Record: true,
		Volumes: func() ([]string, error) { return []string{"other-12345678-opencode-20261201-000000"}, nil },
		Say:     func(s string) { said = append(said, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if id.HomeVolume != id.VM+"-20261203-090000" {
		t.Errorf("home volume %q, want this clone's own %s-20261203-090000", id.HomeVolume, id.VM)
	}
	if len(said) != 1 || !strings.Contains(said[0], "names the home volume other-12345678-opencode-20261201-000000, which is not one of this clone's VM") {
		t.Errorf("said %q", said)
	}
	if st, err := ReadState(dir); err != nil || st.HomeVolume != id.HomeVolume {
		t.Errorf("this clone's own not recorded: %+v %v", st, err)
	}
}
