package outer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"sort"
	"strings"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/folderfs"
	"github.com/agents-sandbox/asb/runner"
	"github.com/agents-sandbox/asb/schema"
)

// UpdateStep is what `asb update` does with one file.
type UpdateStep struct {
	Path   string
	Action string // updated, merged, conflict, created, removed, kept-dropped, left-deleted
	Why    string
	Before []byte // the file as it was (nil: absent)
	After  []byte // what it becomes (nil: removed or left absent)
}

// ConflictError is an update that left conflict markers.
type ConflictError struct{ Files []string }

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%d file(s) with conflicts: %s — resolve the <<<<<<< ======= >>>>>>> markers, run asb validate, then commit",
		len(e.Files), strings.Join(e.Files, ", "))
}

// UpdatePlan is every file an update changes, and what it writes.
type UpdatePlan struct {
	Steps []UpdateStep
	dir   string
	write []generator.PendingFile // relative to dir
	drop  []string                // relative paths to remove
}

// Conflicts are the files left with conflict markers.
func (u *UpdatePlan) Conflicts() []string {
	var out []string
	for _, s := range u.Steps {
		if s.Action == "conflict" {
			out = append(out, s.Path)
		}
	}
	return out
}

// PlanUpdate renders the templates of tree with the answers of dir's
// record (asb.yaml) and merges each file three ways: what asb wrote last
// (.asb-base/), the user's file, the new render. Nothing is written.
func PlanUpdate(ctx context.Context, dir string, tree fs.FS, version string, git runner.Git) (*UpdatePlan, error) {
	return PlanChange(ctx, dir, tree, version, git, nil)
}

// PlanChange is PlanUpdate with the recorded answers changed by change
// first (asb agent add): the new render is merged into the user's files
// the same way, so their edits stay.
func PlanChange(ctx context.Context, dir string, tree fs.FS, version string, git runner.Git, change func(*schema.InitOptions) error) (*UpdatePlan, error) {
	plan, _, err := renderRecord(dir, tree, version, change)
	if err != nil {
		return nil, err
	}
	// Every read goes through the folder's confined root: a committed link
	// (.asb-base -> ~/.ssh) is refused, never read through or written to.
	root, err := folderfs.Open(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	u := &UpdatePlan{dir: dir}
	made := map[string]bool{}
	for _, f := range plan.Files {
		if f.Dir || f.Preserve || strings.HasPrefix(f.Path, schema.BaseDir+"/") {
			continue
		}
		made[f.Path] = true
		if err := u.mergeOne(ctx, root, f, git); err != nil {
			return nil, err
		}
	}
	if err := u.dropped(root, made); err != nil {
		return nil, err
	}
	return u, nil
}

// renderRecord renders the templates of tree with the answers of dir's
// record (asb.yaml), changed by change first when set, as asb version
// would write them; it returns the plan and the record.
func renderRecord(dir string, tree fs.FS, version string, change func(*schema.InitOptions) error) (*generator.Plan, *schema.Record, error) {
	rec, err := schema.ReadRecord(dir)
	if err != nil {
		return nil, nil, err
	}
	opts := rec.Answers
	if change != nil {
		if err := change(&opts); err != nil {
			return nil, nil, err
		}
	}
	opts.Record = &schema.Record{Asb: version, Workspace: rec.Workspace}
	plan, err := generator.Render(tree, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("render the templates with the answers of %s: %w", schema.RecordFile, err)
	}
	return plan, rec, nil
}

// mergeOne plans one file of the new render.
func (u *UpdatePlan) mergeOne(ctx context.Context, root *folderfs.Root, f generator.File, git runner.Git) error {
	ours, oursOK, err := readOpt(root, f.Path)
	if err != nil {
		return err
	}
	base, baseOK, err := readOpt(root, generator.BasePath(f.Path))
	if err != nil {
		return err
	}
	theirs := f.Content
	owned := f.Path == schema.RecordFile || strings.HasPrefix(f.Path, schema.SchemaDir+"/")
	step := UpdateStep{Path: f.Path, Before: ours}
	switch {
	case oursOK && bytes.Equal(ours, theirs):
		// up to date; the base may still be stale
	case owned || (!oursOK && !baseOK):
		step.Action, step.After = "created", theirs
		if oursOK {
			step.Action, step.Why = "updated", "asb's own file"
		}
	case !oursOK:
		step.Action, step.Why = "left-deleted", "you deleted it; the new template is in "+generator.BasePath(f.Path)
	case baseOK && bytes.Equal(ours, base):
		step.Action, step.Why, step.After = "updated", "you had not edited it", theirs
	case baseOK && bytes.Equal(theirs, base):
		// the template did not change: the user's file stays as it is
	default:
		merged, conflicts, err := git.MergeFile(ctx, ours, base, theirs, [3]string{f.Path + " (yours)", f.Path + " (asb's last)", f.Path + " (asb's new)"})
		if err != nil {
			return fmt.Errorf("merge %s: %w", f.Path, err)
		}
		step.Action, step.Why, step.After = "merged", "your edits and the new template", merged
		if conflicts > 0 {
			step.Action, step.Why = "conflict", fmt.Sprintf("%d place(s) where you and the template changed the same lines: markers left", conflicts)
		}
	}
	if step.Action != "" {
		u.Steps = append(u.Steps, step)
		if step.After != nil {
			u.write = append(u.write, pending(root, f.Path, step.After, f.Mode))
		}
	}
	if !baseOK || !bytes.Equal(base, theirs) {
		u.write = append(u.write, pending(root, generator.BasePath(f.Path), theirs, generator.ModeFile))
	}
	return nil
}

// dropped plans the files the new templates no longer make: removed when
// the user had not edited them and git tracks them, kept (and named)
// otherwise (removable).
func (u *UpdatePlan) dropped(root *folderfs.Root, made map[string]bool) error {
	var bases []string
	err := fs.WalkDir(root.FS(), schema.BaseDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		bases = append(bases, strings.TrimPrefix(p, schema.BaseDir+"/"))
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %w", schema.BaseDir, folderfs.Explain(schema.BaseDir, err))
	}
	sort.Strings(bases)
	tracked, err := folderfs.ReadTracked(root.Dir())
	if err != nil {
		return err
	}
	for _, rel := range bases {
		if made[rel] {
			continue
		}
		base, _, err := readOpt(root, generator.BasePath(rel))
		if err != nil {
			return err
		}
		ours, ok, err := readOpt(root, rel)
		if err != nil {
			return err
		}
		u.drop = append(u.drop, generator.BasePath(rel))
		switch {
		case !ok:
		case !bytes.Equal(ours, base):
			u.Steps = append(u.Steps, UpdateStep{Path: rel, Action: "kept-dropped", Why: "the templates no longer make it; kept, since you edited it", Before: ours, After: ours})
		case !removable(tracked, rel) && !generator.WroteHere(root, rel, ours):
			u.Steps = append(u.Steps, UpdateStep{Path: rel, Action: "kept-dropped", Why: "the templates no longer make it; kept, since neither the outer folder's git tracks it nor asb wrote it here (remove it yourself if nothing uses it)", Before: ours, After: ours})
		default:
			u.Steps = append(u.Steps, UpdateStep{Path: rel, Action: "removed", Why: "the templates no longer make it; you had not edited it", Before: ours})
			u.drop = append(u.drop, rel)
		}
	}
	return nil
}

// removable reports whether an update may remove rel, a file the
// templates no longer make that equals its copy in .asb-base/: one the
// outer folder's git tracks (what a pull could remove as well), never one
// in workspace/ or asb's and go-task's own folders; else (dropped) only
// one this machine's record says asb wrote as it is. .asb-base/ comes
// with a clone: a pushed .asb-base/workspace/README.md holding what the
// project's README holds would otherwise have an update remove the
// project's file, or the user's own untracked notes.txt
// (hostile_conf_update_drop.txtar).
func removable(t *folderfs.Tracked, rel string) bool {
	top, _, nested := strings.Cut(rel, "/")
	if t == nil || t.Index == "" || t.Unknown || slices.ContainsFunc(keptFolders, func(d string) bool { return strings.EqualFold(d, top) }) {
		return false
	}
	if nested {
		return slices.Contains(t.Sub, rel)
	}
	return slices.Contains(t.Top, rel)
}

// keptFolders are the top folders an update never removes a file of.
var keptFolders = []string{WorkspaceDir, folderfs.StateDir, ".task", ".git"}

// Apply writes the update all or nothing, then removes the dropped files,
// all through the folder's confined root.
func (u *UpdatePlan) Apply() error {
	root, err := folderfs.Open(u.dir)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := generator.WriteFilesIn(root, u.write); err != nil {
		return fmt.Errorf("nothing was changed: %w", err)
	}
	for _, p := range u.drop {
		if err := root.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// Print writes one line per file, and with diff the change as a unified
// diff.
func (u *UpdatePlan) Print(ctx context.Context, w io.Writer, git runner.Git, diff bool) error {
	for _, s := range u.Steps {
		fmt.Fprintf(w, "%-13s %s", s.Action, s.Path)
		if s.Why != "" {
			fmt.Fprintf(w, "  (%s)", s.Why)
		}
		fmt.Fprintln(w)
		if diff && s.After != nil && !bytes.Equal(s.After, s.Before) {
			d, err := git.Diff(ctx, s.Path, s.Before, s.After)
			if err != nil {
				return err
			}
			fmt.Fprint(w, d)
		}
	}
	return nil
}

// Changed reports whether the update writes anything.
func (u *UpdatePlan) Changed() bool { return len(u.write) > 0 || len(u.drop) > 0 }

func pending(root *folderfs.Root, rel string, data []byte, mode fs.FileMode) generator.PendingFile {
	if fi, err := root.Lstat(rel); err == nil && fi.Mode().IsRegular() {
		mode = fi.Mode().Perm()
	}
	return generator.PendingFile{Path: rel, Data: data, Mode: mode}
}

// readOpt reads rel of the folder: ok is false when it does not exist; a
// path through a link out of the folder, or one that is not a plain file,
// is an error.
func readOpt(root *folderfs.Root, rel string) (data []byte, ok bool, err error) {
	fi, err := root.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, folderfs.Explain(rel, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, false, fmt.Errorf("%s is not a regular file (a link or a folder): asb reads and writes only plain files of the outer folder; replace it with the file", rel)
	}
	b, err := root.ReadFile(rel, schema.MaxFileSize)
	return b, err == nil, err
}
