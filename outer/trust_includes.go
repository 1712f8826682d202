package outer

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/agents-sandbox/asb/internal/folderfs"
	"github.com/agents-sandbox/asb/runner"
)

// The Taskfile's includes. go-task runs the tasks of every Taskfile the
// folder's Taskfile includes, wherever it sits; an approval of the
// Taskfile alone would let a later commit change what runs through an
// included file below a subfolder. So the trust set holds every Taskfile
// reached through includes; an include asb cannot pin to files of the
// folder (a template, a remote Taskfile, a path out of the folder) is
// refused.

// maxIncluded bounds the Taskfiles one folder may reach through includes.
const maxIncluded = 64

// readIncludes adds to the set the Taskfiles that file (already in the
// set) includes, and theirs in turn. An include naming a folder adds every
// YAML file at its top: go-task picks one of them by its own list of
// names, and the set holds a superset of it.
func (s *TrustSet) readIncludes(root *folderfs.Root, file string, seen map[string]bool, st *stamps) error {
	if seen[file] {
		return nil
	}
	seen[file] = true
	if len(seen) > maxIncluded {
		return fmt.Errorf("%s: more than %d Taskfiles through includes: asb approves no folder it cannot read whole", file, maxIncluded)
	}
	raw, ok := s.Files[file]
	if !ok {
		return nil
	}
	incs, err := runner.ParseIncludes(raw)
	if err != nil {
		// go-task's own parser refuses it too, and runs nothing of it; its
		// error (file and line) is the one to show, when it runs.
		return nil //nolint:nilerr
	}
	for _, inc := range incs {
		rel, err := includePath(file, inc)
		if err != nil {
			return err
		}
		files, err := s.readIncluded(root, rel, st)
		if err != nil {
			return err
		}
		for _, f := range files {
			if err := s.readIncludes(root, f, seen, st); err != nil {
				return err
			}
		}
	}
	return nil
}

// readIncluded adds the included rel (a file, or a folder's YAML files)
// to the set and returns what it added. A missing one adds nothing: go-task
// then fails, or skips an optional include, and runs nothing from it.
func (s *TrustSet) readIncluded(root *folderfs.Root, rel string, st *stamps) ([]string, error) {
	st.add(rel) // a missing one that appears later changes the stamps
	fi, err := root.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, folderfs.Explain(rel, err)
	}
	if !fi.IsDir() {
		return []string{rel}, s.readFile(root, rel, fs.FileInfoToDirEntry(fi), st)
	}
	entries, err := fs.ReadDir(root.FS(), rel)
	if err != nil {
		return nil, folderfs.Explain(rel, err)
	}
	var out []string
	for _, e := range entries {
		if ext := path.Ext(e.Name()); e.IsDir() || (ext != ".yml" && ext != ".yaml") {
			continue
		}
		p := path.Join(rel, e.Name())
		if err := s.readFile(root, p, e, st); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// includePath is the folder-relative path an include of file names, or
// why asb cannot pin it to files of the folder.
func includePath(file string, inc runner.Include) (string, error) {
	t := inc.Taskfile
	refuse := func(why string) (string, error) {
		return "", fmt.Errorf("%s includes %q (as %s): not supported by asb: %s, so an approval of the folder could not cover what go-task would run; include a Taskfile inside the outer folder by its relative path", file, t, inc.Namespace, why)
	}
	switch {
	case strings.Contains(t, "{{"):
		return refuse("its path is a template, known only when go-task runs")
	case strings.Contains(t, "$"):
		// go-task expands the path as a shell word from the environment
		// (execext.ExpandLiteral): ./tasks${X:-}/a.yml is ./tasks/a.yml to
		// it, a missing file to a literal reading.
		return refuse("its path holds a $, which go-task expands from the environment when it runs")
	case strings.ContainsAny(t, "\\`"):
		// The same reading takes a backslash as an escape (one before a
		// line break joins the lines: ./work\<newline>space/a.yml is
		// ./workspace/a.yml, the VM's) and a backquote as a command.
		return refuse("its path holds a \\ or a `, which go-task reads as a shell word's escape or command")
	case strings.Contains(t, "://") || strings.HasPrefix(t, "git@"):
		return refuse("it is fetched from elsewhere")
	case path.IsAbs(t) || strings.HasPrefix(t, "~"):
		return refuse("it lies outside the outer folder")
	}
	rel := path.Clean(path.Join(path.Dir(file), t))
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return refuse("it lies outside the outer folder")
	}
	return rel, nil
}

// Taskfiles are the folder's Taskfile and every Taskfile it includes, by
// path, read as the trust set reads them: what go-task will read. A
// looking run checks them before go-task reads any (runner/engine).
func Taskfiles(dir string) (map[string][]byte, error) {
	root, err := folderfs.Open(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	s := &TrustSet{Files: map[string][]byte{}}
	st := newStamps(root)
	if _, err := s.readIncluded(root, runner.TaskfileName, st); err != nil {
		return nil, err
	}
	if err := s.readIncludes(root, runner.TaskfileName, map[string]bool{}, st); err != nil {
		return nil, err
	}
	return s.Files, nil
}
