package generator

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/agents-sandbox/asb/internal/folderfs"
	"github.com/agents-sandbox/asb/schema"
)

// Classify compares the plan with what is on disk under root.
func Classify(root string, plan *Plan, opts WriteOptions) ([]Change, error) {
	var r *folderfs.Root // nil: the folder does not exist yet
	if fi, err := os.Stat(root); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("%s is a file, not a folder: choose another DIR", root)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", root, notDirHint(err))
	} else if err == nil {
		if r, err = folderfs.Open(root); err != nil {
			return nil, err
		}
		defer r.Close()
	}
	prev := readManifest(r)
	var out []Change
	var blocked []string // folders of the plan that something is in the way of
	for _, f := range plan.Files {
		under := ""
		for _, b := range blocked {
			if strings.HasPrefix(f.Path, b+"/") {
				under = b
			}
		}
		c := classifyEntry(r, f, under, prev, opts)
		if c.Action == Conflict && f.Dir && under == "" {
			blocked = append(blocked, f.Path)
		}
		out = append(out, c)
	}
	// asb's own record must be writable too, or Apply would fail halfway
	// (and a dry run would not have said so). These come after the plan's
	// entries, so out[i] still describes plan.Files[i].
	for _, aux := range []struct {
		path string
		dir  bool
	}{{path.Dir(ManifestPath), true}, {ManifestPath, false}} {
		if why := inTheWay(r, aux.path, aux.dir); why != "" {
			mode := ModeFile
			if aux.dir {
				mode = ModeDir
			}
			out = append(out, Change{Path: aux.path, Mode: mode, Dir: aux.dir, Action: Conflict, Why: why})
			break
		}
	}
	return out, nil
}

// classifyEntry says what Apply does with one entry of the plan; under is
// the plan's folder above it that something is in the way of, if any.
func classifyEntry(r *folderfs.Root, f File, under string, prev manifest, opts WriteOptions) Change {
	c := Change{Path: f.Path, Mode: f.Mode, Dir: f.Dir}
	fi, err := lstat(r, f.Path)
	switch {
	case under != "":
		c.Action, c.Why = Conflict, "under "+under+"/, which is in the way"
	case errors.Is(err, fs.ErrNotExist):
		c.Action = Create
	case err != nil:
		c.Action, c.Why = Conflict, folderfs.Explain(f.Path, notDirHint(err)).Error()
	case f.Dir && fi.IsDir():
		c.Action = Unchanged
	case f.Dir:
		c.Action, c.Why = Conflict, "a file or link is in the way of a folder; move it away"
	case !fi.Mode().IsRegular():
		c.Action, c.Why = Conflict, "not a regular file (a folder or a link); move it away"
	default:
		cur, err := r.ReadFile(f.Path, schema.MaxFileSize)
		if err != nil {
			c.Action, c.Why = Conflict, err.Error()
			break
		}
		classifyContent(&c, r, f, cur, fi.Mode().Perm(), prev, opts)
	}
	return c
}

// classifyContent judges a regular file that is already there: its content
// cur and mode against the plan's, and whether the user edited it.
func classifyContent(c *Change, r *folderfs.Root, f File, cur []byte, mode fs.FileMode, prev manifest, opts WriteOptions) {
	switch {
	case bytes.Equal(cur, f.Content) && mode == f.Mode.Perm():
		c.Action = Unchanged
	case bytes.Equal(cur, f.Content):
		c.Action, c.Why = Update, fmt.Sprintf("mode %o → %o", mode, f.Mode.Perm())
	case f.Preserve:
		c.Action, c.Why = Kept, "yours: never overwritten"
	case f.AppendLines:
		appendLines(c, cur, f.Content)
	case prev.Files[f.Path] == digest(cur):
		c.Action = Update
	case opts.Force:
		c.Action, c.Why = Overwrite, "edited by you; old copy in "+f.Path+".orig"
		if why := inTheWay(r, f.Path+".orig", false); why != "" {
			c.Action, c.Why = Conflict, f.Path+".orig: "+why
		}
	default:
		c.Action, c.Why = Kept, "edited by you; --force overwrites it (keeping a .orig copy)"
	}
}

// appendLines classifies a file of AppendLines that differs from the plan:
// the plan's lines it lacks are appended to it; none lacking, it is kept.
func appendLines(c *Change, cur, want []byte) {
	have := map[string]bool{}
	for l := range strings.SplitSeq(string(cur), "\n") {
		have[strings.TrimSpace(l)] = true
	}
	var missing []string
	for l := range strings.SplitSeq(string(want), "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") && !have[t] {
			missing = append(missing, t)
		}
	}
	if len(missing) == 0 {
		c.Action, c.Why = Kept, "yours: it has every line asb needs"
		return
	}
	out := string(cur)
	if out != "" && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	out += "\n# Added by asb init: the outer folder needs these ignored (secrets.env holds credentials).\n" + strings.Join(missing, "\n") + "\n"
	c.Action, c.Why, c.Content = Update, "yours: added the lines asb needs: "+strings.Join(missing, " "), []byte(out)
}

// lstat describes rel in r; in a folder that does not exist yet (r nil)
// nothing exists.
func lstat(r *folderfs.Root, rel string) (fs.FileInfo, error) {
	if r == nil {
		return nil, fs.ErrNotExist
	}
	return r.Lstat(rel)
}

// inTheWay says why the entry rel cannot be written as a folder (dir) or
// a regular file, or returns "" when rel is absent or already of that kind.
func inTheWay(r *folderfs.Root, rel string, dir bool) string {
	fi, err := lstat(r, rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return ""
	case err != nil:
		return folderfs.Explain(rel, notDirHint(err)).Error()
	case dir && !fi.IsDir():
		return "a file or link is in the way of a folder; move it away"
	case !dir && !fi.Mode().IsRegular():
		return "not a regular file (a folder or a link); move it away"
	}
	return ""
}
func readManifest(r *folderfs.Root) manifest {
	var m manifest
	if r == nil || folderfs.Local(r.Dir(), ManifestPath) != nil {
		return m // none, or one a clone carried: every file counts as edited
	}
	raw, err := r.ReadFile(ManifestPath, schema.MaxFileSize)
	if err == nil {
		_ = json.Unmarshal(raw, &m) // a damaged manifest only means "treat files as edited"
	}
	return m
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// notDirHint rewrites "not a directory" errors, which happen when a path
// runs through a regular file, into advice.
func notDirHint(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && errors.Is(err, syscallENOTDIR()) {
		return fmt.Errorf("%s runs through a file, not a folder: choose a DIR that is not under a file", pe.Path)
	}
	return err
}

// WroteHere reports whether this machine's record of what asb wrote in
// the folder of r (ManifestPath, never one a clone carried) says asb wrote
// rel with exactly content.
func WroteHere(r *folderfs.Root, rel string, content []byte) bool {
	d, ok := readManifest(r).Files[rel]
	return ok && d == digest(content)
}
