package outer

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"sort"
	"strings"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/folderfs"
	"github.com/agents-sandbox/asb/schema"
)

// Review before you run: the files at the top of a tree the VM writes
// (workspace/, a session's checkout) that tools on the host run or obey
// (schema.HostRun) are compared with what asb last showed the user, after
// each agent run; the changed ones are listed, then recorded as shown. The
// record (.asb/review/TREE.json, git-ignored) keeps each file's hash and
// stamp (folderfs.Stamp: device, inode, size, modification and change
// times, mode): a file whose stamp did not change is not read again.

// reviewDir holds the records, one per tree.
const reviewDir = ".asb/review"

// Review limits: what asb walks of a folder entry, and reads of a file
// (variables: tests lower them).
var (
	maxReviewEntries = 2000
	// maxReviewDepth is how deep below the tree a walk goes: each open
	// walks its path again from the top, so a chain of n folders costs
	// n²/2 opens; no tool's settings nest this deep.
	maxReviewDepth       = 32
	maxReviewHash  int64 = 64 << 20
)

// kindUnread is the record's entry "FOLDER/" of a folder whose walk
// stopped at maxReviewEntries: it is listed on every review, as what asb
// did not walk may have changed.
const kindUnread = "unread"

// HostRunChange is a file of the table that changed since the last review.
type HostRunChange struct {
	Path   string `json:"path"`
	Change string `json:"change"` // new, changed, removed, unread
	Why    string `json:"why"`
}

// reviewed is what a record holds of one file.
type reviewed struct {
	Kind   string `json:"kind"` // file, link, or kindUnread
	SHA256 string `json:"sha256,omitempty"`
	Target string `json:"target,omitempty"`
	// Stamp is the zero Stamp when the next review must read the file
	// again: it changed just before this one looked (racy), or an older
	// asb wrote the record (its size and mtime fields are ignored).
	Stamp folderfs.Stamp `json:"stamp,omitzero"`
}

// reviewTree is the tree the VM of session (or the folder's own, "")
// writes, and its record's name.
func reviewTree(session string) (tree, record string) {
	if session == "" {
		return WorkspaceDir, reviewDir + "/workspace.json"
	}
	return schema.SessionPathsOf(session).Workspace, reviewDir + "/session-" + session + ".json"
}

// ReviewBaseline records the tree of session as reviewed when it has no
// record yet (before the VM first runs there: what it then changes is
// listed after the run). table is read only then.
func ReviewBaseline(dir, session string, table func() (schema.HostRunTable, error)) error {
	r, err := folderfs.Open(dir)
	if err != nil {
		return err
	}
	defer r.Close()
	tree, record := reviewTree(session)
	if _, err := r.Lstat(record); err == nil {
		return nil
	}
	t, err := table()
	if err != nil {
		return err
	}
	now, err := scanHostRun(r, tree, t, nil)
	if err != nil {
		return err
	}
	return writeReview(dir, record, now)
}

// ReviewHostRun lists on w the files of the table that changed in the tree
// of session since the last review, records them as shown, and returns
// them.
func ReviewHostRun(dir, session string, table schema.HostRunTable, w io.Writer) ([]HostRunChange, error) {
	r, err := folderfs.Open(dir)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	tree, record := reviewTree(session)
	var last map[string]reviewed
	raw, err := r.ReadFile(record, schema.MaxFileSize)
	// An unreadable record: everything is new, and the record is written.
	read := err == nil && json.Unmarshal(raw, &last) == nil
	now, err := scanHostRun(r, tree, table, last)
	if err != nil {
		return nil, err
	}
	changes := compareReview(last, now, table)
	if !read || !maps.Equal(last, now) { // an unchanged record is not written again
		if err := writeReview(dir, record, now); err != nil {
			return changes, err
		}
	}
	PrintHostRun(w, tree+"/", changes)
	return changes, nil
}

// PrintHostRun writes changes (of the tree where) for the user to look at.
func PrintHostRun(w io.Writer, where string, changes []HostRunChange) {
	if len(changes) == 0 {
		return
	}
	fmt.Fprintf(w, "asb: the VM changed files of %s that tools on your host run or obey; look at them before you run them (docs/vm-repositories.md):\n", where)
	width := 0
	for _, c := range changes {
		width = max(width, len(c.Path))
	}
	for _, c := range changes {
		fmt.Fprintf(w, "  %-*s  %-7s  %s\n", width, c.Path, c.Change, c.Why)
	}
}

// compareReview lists what differs between last and now, by path.
func compareReview(last, now map[string]reviewed, table schema.HostRunTable) []HostRunChange {
	var out []HostRunChange
	add := func(p, change string, v reviewed) {
		e, ok := table.Match(p, false)
		if !ok { // a folder of the table made a link
			e, _ = table.Match(p+"/", false)
		}
		out = append(out, HostRunChange{Path: p, Change: change, Why: e.Why + reviewNote(v)})
	}
	for p, v := range now {
		w, ok := last[p]
		switch {
		case v.Kind == kindUnread:
			out = append(out, HostRunChange{Path: p, Change: kindUnread,
				Why: fmt.Sprintf("more than %d files (or folders over %d deep): not all reviewed; look at it yourself", maxReviewEntries, maxReviewDepth)})
		case !ok:
			add(p, "new", v)
		case w.Kind != v.Kind || w.Target != v.Target || w.SHA256 != v.SHA256:
			add(p, "changed", v)
		}
	}
	for p, w := range last {
		if _, ok := now[p]; !ok && w.Kind != kindUnread && !unread(now, p) {
			add(p, "removed", reviewed{})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// unread reports whether p is under a folder of now that was not walked
// whole: that it was not reached says nothing of it.
func unread(now map[string]reviewed, p string) bool {
	for dir := p; strings.Contains(dir, "/"); {
		dir = dir[:strings.LastIndex(dir, "/")]
		if now[dir+"/"].Kind == kindUnread {
			return true
		}
	}
	return false
}

// reviewNote is what the list adds to why of v: the link it is, and that
// asb did not read the file (listed whenever it is written, so the user
// looks at what asb could not).
func reviewNote(v reviewed) string {
	note := ""
	if v.Kind == "link" {
		note = "; a link to " + v.Target
	}
	switch {
	case strings.HasPrefix(v.SHA256, hashLarge):
		note += fmt.Sprintf("; over %d MiB, too large to read: listed whenever it is written, look at it yourself", maxReviewHash>>20)
	case strings.HasPrefix(v.SHA256, hashUnreadable):
		note += "; asb could not read it: listed whenever it is written, look at it yourself"
	}
	return note
}

// writeReview writes a record (under .asb/, through the folder's root).
func writeReview(dir, record string, now map[string]reviewed) error {
	raw, err := encodeReview(now)
	if err != nil {
		return err
	}
	return generator.WriteFileAtomic(dir, record, raw, generator.ModeFile)
}

// encodeReview is a record's content (keys sorted: the same files give the
// same bytes).
func encodeReview(now map[string]reviewed) ([]byte, error) {
	raw, err := json.MarshalIndent(now, "", " ")
	return append(raw, '\n'), err
}
