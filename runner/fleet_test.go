package runner

import (
	"testing"
	"time"
)

// A label is anyone's to set (msb create --label, or labels: in a
// config): only a clean absolute folder path makes a VM asb's.
func TestOwnerOfTrustsOnlyACleanAbsoluteFolder(t *testing.T) {
	exists := func(p string) bool { return p == "/home/u/proj" }
	for _, tc := range []struct {
		folder string
		asbs   bool
	}{
		{"/home/u/proj", true},
		{"/home/u/gone", true},
		{"", false},
		{"proj", false},
		{"/home/u/../u/proj", false},
		{"/home/u/proj/", false},
		{"/home/u/pro\nj", false},
		{"/home/u/\x1b[2Jproj", false},
	} {
		o := ownerOf(map[string]string{LabelFolder: tc.folder, LabelSession: "s", LabelAgent: "a"}, exists)
		if (o.Folder != "") != tc.asbs {
			t.Errorf("folder label %q: owner %+v, asb's = %v", tc.folder, o, tc.asbs)
		}
	}
	if o := ownerOf(map[string]string{LabelFolder: "/home/u/gone"}, exists); !o.FolderGone {
		t.Errorf("a folder that is not there: %+v", o)
	}
}

func TestShownQuotesWhatCouldDriveATerminal(t *testing.T) {
	for in, want := range map[string]string{
		"/home/u/my proj": "/home/u/my proj",
		"s1":              "s1",
		"a\x1b[31mb":      `"a\x1b[31mb"`,
		"x\ny":            `"x\ny"`,
		"é":               "é",
	} {
		if got := Shown(in); got != want {
			t.Errorf("Shown(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestParseAge(t *testing.T) {
	for in, want := range map[string]time.Duration{"7d": 7 * 24 * time.Hour, "12h": 12 * time.Hour, "30m": 30 * time.Minute, "0s": 0} {
		if got, err := ParseAge(in); err != nil || got != want {
			t.Errorf("ParseAge(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "7", "d", "-1d", "1.5h", "7w", "1e3s"} {
		if _, err := ParseAge(bad); err == nil {
			t.Errorf("ParseAge(%q) accepted", bad)
		}
	}
}

// A digest is counted once, on the reference asb owns; an image another
// reference of whose digest a VM runs is in use.
func TestImagesShareDigests(t *testing.T) {
	imgs := []Image{
		{Ref: "agents-sandbox/runner-p-1:opencode-latest", Digest: "sha256:a", Size: 100},
		{Ref: "p-1:opencode-latest", Digest: "sha256:a", Size: 100},
		{Ref: "other:1", Digest: "sha256:b", Size: 7},
	}
	vms := []FleetVM{{Sandbox: Sandbox{Name: "p-1-opencode", Image: "p-1:opencode-latest"}, Owner: Owner{Folder: "/p"}}}
	f := Fleet{VMs: vms, Images: attributeImages(imgs, vms)}
	f.attributeBySlug()
	f.countDigests()
	var total int64
	for _, img := range f.Images {
		total += img.Bytes
		if img.Ref != "other:1" && (img.Folder != "/p" || len(img.UsedBy) != 1) {
			t.Errorf("%s: %+v", img.Ref, img)
		}
	}
	if total != 107 {
		t.Errorf("total %d, want 107 (digest a once)", total)
	}
	if plan := f.PrunePlan(PruneOptions{Now: time.Now()}); len(plan) != 0 {
		t.Errorf("prune of images a running VM uses, or not asb's: %+v", plan)
	}
}

// A session's own volume goes when asb session says the session ended and
// no VM that stays mounts it; the folder's home volume never does.
func TestPruneSessionVolume(t *testing.T) {
	f := Fleet{
		VMs: []FleetVM{
			{Sandbox: Sandbox{Name: "p-a", Status: "Running"}, Owner: Owner{Folder: "/p", Agent: "a"}, HomeVolume: "p-home"},
			{Sandbox: Sandbox{Name: "p-a-s1", Status: "Stopped"}, Owner: Owner{Folder: "/p", Session: "s1", Agent: "a"}, HomeVolume: "p-s1-home"},
		},
		Volumes: []FleetVolume{
			{Volume: Volume{Name: "p-home"}, Owner: Owner{Folder: "/p"}, UsedBy: []string{"p-a"}},
			{Volume: Volume{Name: "p-s1-home"}, Owner: Owner{Folder: "/p", Session: "s1"}, UsedBy: []string{"p-a-s1"}},
		},
	}
	names := func(o PruneOptions) []string {
		var out []string
		for _, r := range f.PrunePlan(o) {
			out = append(out, r.Kind+" "+r.Name+" ("+r.Why+")")
		}
		return out
	}
	if got := names(PruneOptions{Now: time.Now()}); len(got) != 1 || got[0] != "vm p-a-s1 (stopped)" {
		t.Errorf("without a session record: %q", got)
	}
	gone := func(folder, session string) bool { return folder == "/p" && session == "s1" }
	got := names(PruneOptions{Now: time.Now(), SessionGone: gone})
	if len(got) != 2 || got[1] != "volume p-s1-home (its session is gone)" {
		t.Errorf("with s1 ended: %q", got)
	}
}
