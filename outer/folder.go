package outer

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/yamledit"
	"github.com/agents-sandbox/asb/schema"
)

// The files of the outer folder that Folder reads and edits.
const (
	SandboxFile    = schema.SandboxFile
	SecretsFile    = schema.SecretsFile
	SecretsEnvFile = schema.SecretsEnvFile
)

// Options are what a Folder needs from its caller.
type Options struct {
	// Getenv looks up the host environment (which secrets are set, $HOME);
	// nil means nothing is set.
	Getenv func(string) string
	// Agents are the known agent presets (their config folders and guest
	// targets, which the boundary summary names and mounts must not cover).
	Agents []schema.Agent
	// Policy is the policy in force: Commit refuses an edit that brings
	// in what it forbids. nil: none.
	Policy *schema.Policy
}

// Folder is an outer folder opened for reading or editing: its boundary
// files as they were, and the new contents of the files an edit changed.
// Nothing is written before Commit, and Commit writes nothing when the
// result does not check.
type Folder struct {
	Dir    string
	Getenv func(string) string
	Agents []schema.Agent
	Policy *schema.Policy

	orig    map[string][]byte // name → content; absent when the file does not exist
	modes   map[string]fs.FileMode
	edited  map[string][]byte
	checkFn func(dir string, opts schema.CheckOptions) []schema.Problem
	// fromPending are secrets this edit binds to a command (asb secret add
	// --from), recorded on this host once the edit is written.
	fromPending map[string]bool
	vars        map[string]string // taskVars, once read
}

// Open reads the boundary files of the outer folder dir (found with Resolve).
func Open(dir string, opts Options) (*Folder, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	f := &Folder{Dir: dir, Getenv: getenv, Agents: opts.Agents, Policy: opts.Policy,
		orig: map[string][]byte{}, modes: map[string]fs.FileMode{}, edited: map[string][]byte{}, checkFn: schema.CheckDir}
	for _, name := range []string{SandboxFile, SecretsFile, SecretsEnvFile} {
		p := filepath.Join(dir, name)
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%s is not a regular file (a link or a folder): asb only edits plain files", p)
		}
		data, err := schema.ReadFile(p)
		if err != nil {
			return nil, err
		}
		f.orig[name], f.modes[name] = data, fi.Mode().Perm()
	}
	if _, ok := f.orig[SandboxFile]; !ok {
		return nil, fmt.Errorf("%s has no %s", dir, SandboxFile)
	}
	return f, nil
}

// Current returns the content of name as this folder sees it (edited or
// original) and whether the file exists.
func (f *Folder) Current(name string) ([]byte, bool) {
	if b, ok := f.edited[name]; ok {
		return b, true
	}
	if b, ok := f.orig[name]; ok {
		return b, true
	}
	// Another file of the folder (toolchain/Dockerfile): read when asked.
	p := filepath.Join(f.Dir, filepath.FromSlash(name))
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() || slices.Contains([]string{SandboxFile, SecretsFile, SecretsEnvFile}, name) {
		return nil, false
	}
	b, err := schema.ReadFile(p)
	if err != nil {
		return nil, false
	}
	f.orig[name], f.modes[name] = b, fi.Mode().Perm()
	return b, true
}

// Doc parses the current content of a YAML file of the folder.
func (f *Folder) Doc(name string) (*yamledit.Doc, *yaml.Node, error) {
	data, _ := f.Current(name)
	d, err := yamledit.Parse(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w; fix it by hand (asb validate shows where)", name, err)
	}
	root, err := d.Root()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	return d, root, nil
}

// Save records the new content of doc as file name.
func (f *Folder) Save(name string, d *yamledit.Doc) error {
	b, err := d.Bytes()
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	f.Set(name, b)
	return nil
}

// Set records new content for file name.
func (f *Folder) Set(name string, data []byte) {
	if old, ok := f.orig[name]; ok && bytes.Equal(old, data) {
		delete(f.edited, name)
		return
	}
	f.edited[name] = data
}

// Changed reports whether the folder has anything to write.
func (f *Folder) Changed() bool { return len(f.edited) > 0 }

// RefusedError is an edit that would make the outer folder invalid; nothing
// was written.
type RefusedError struct {
	Files    []string // the edited files
	Problems []schema.Problem
}

func (e *RefusedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "nothing was changed: the edit would make %s invalid:", andList(e.Files))
	for _, p := range e.Problems {
		fmt.Fprintf(&b, "\n  %s", p)
	}
	return b.String()
}

// Commit checks the outer folder with the edited files in place of the old
// ones and, when the edit brings in no error, writes them all or nothing
// (atomically, each in its old mode; secrets.env always 0600). An edit that
// would bring in errors is a *RefusedError and writes nothing. The new
// warnings are returned.
func (f *Folder) Commit() ([]schema.Problem, error) {
	if !f.Changed() {
		return nil, nil
	}
	opts := f.CheckOptions()
	opts.Policy = f.Policy
	before := f.checkFn(f.Dir, opts)
	opts.Overrides = map[string][]byte{}
	for name, data := range f.edited {
		opts.Overrides[name] = data
	}
	after := f.checkFn(f.Dir, opts)
	newErrs, newWarns := f.introduced(before, after)
	if len(newErrs) > 0 {
		return nil, &RefusedError{Files: f.sortedEdited(), Problems: newErrs}
	}
	var files []generator.PendingFile
	for _, name := range f.sortedEdited() {
		mode, ok := f.modes[name]
		if !ok {
			mode = generator.ModeFile
		}
		if name == SecretsEnvFile {
			mode = generator.ModeSecret // host only, whatever it was
		}
		files = append(files, generator.PendingFile{Path: name, Data: f.edited[name], Mode: mode})
	}
	if err := generator.WriteFilesAtomic(f.Dir, files); err != nil {
		return nil, fmt.Errorf("nothing was changed: %w", err)
	}
	for _, name := range f.sortedEdited() {
		f.orig[name] = f.edited[name]
	}
	f.edited = map[string][]byte{}
	return newWarns, nil
}

// introduced returns the problems of after, in the edited files, that before
// did not have (compared without their positions, which an edit moves).
func (f *Folder) introduced(before, after []schema.Problem) (errs, warns []schema.Problem) {
	type key struct {
		file, field, msg string
		sev              schema.Severity
	}
	seen := map[key]int{}
	for _, p := range before {
		seen[key{p.File, p.Field, p.Msg, p.Severity}]++
	}
	for _, p := range after {
		k := key{p.File, p.Field, p.Msg, p.Severity}
		if seen[k] > 0 {
			seen[k]--
			continue
		}
		if _, edited := f.edited[filepath.ToSlash(p.File)]; !edited {
			continue
		}
		if p.Severity == schema.SeverityError {
			errs = append(errs, p)
		} else {
			warns = append(warns, p)
		}
	}
	schema.SortProblems(errs)
	schema.SortProblems(warns)
	return errs, warns
}

func (f *Folder) sortedEdited() []string {
	var names []string
	for n := range f.edited {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// andList joins names as English does: "a", "a and b", "a, b, and c".
func andList(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	case 2:
		return names[0] + " and " + names[1]
	}
	return strings.Join(names[:len(names)-1], ", ") + ", and " + names[len(names)-1]
}

// SetKey sets a top-level key of a YAML file to the scalar n (cpus: 4),
// keeping the file's comments and layout, and records the edit.
func (f *Folder) SetKey(name, key string, n *yaml.Node, order []string) error {
	doc, root, err := f.Doc(name)
	if err != nil {
		return err
	}
	yamledit.Set(root, key, n, order)
	return f.Save(name, doc)
}
