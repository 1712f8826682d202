package boundarycmd

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/outerdir"
	"github.com/agents-sandbox/asb/internal/yamledit"
	"github.com/agents-sandbox/asb/schema"
)

// The files of the outer folder the boundary commands read and edit.
const (
	SandboxFile    = schema.SandboxFile
	SecretsFile    = schema.SecretsFile
	SecretsEnvFile = schema.SecretsEnvFile
)

// AddDirFlag adds -d/--dir to cmd and its subcommands.
func AddDirFlag(cmd *cobra.Command, dir *string) {
	cmd.PersistentFlags().StringVarP(dir, "dir", "d", "", "the outer folder (default: the folder holding sandbox.yaml, here or above)")
}

// Session is one run of an edit command: the outer folder, the files as
// they were, and the new contents of the files it edits. Nothing is written
// before Commit, and Commit writes nothing when the result does not check.
type Session struct {
	Dir       string
	IO        *cmdutil.IOStreams
	Getenv    func(string) string
	Templates fs.FS

	orig    map[string][]byte // name → content; absent when the file does not exist
	modes   map[string]fs.FileMode
	edited  map[string][]byte
	checkFn func(dir string, opts schema.CheckOptions) []schema.Problem
}

// Open finds the outer folder (dirFlag, or up from the working directory)
// and reads its boundary files.
func Open(f *cmdutil.Factory, dirFlag string) (*Session, error) {
	wd, err := f.Getwd()
	if err != nil {
		return nil, fmt.Errorf("working directory: %w", err)
	}
	dir, err := outerdir.Resolve(wd, dirFlag)
	if err != nil {
		return nil, err
	}
	getenv := f.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	s := &Session{Dir: dir, IO: f.IO, Getenv: getenv, Templates: f.Templates,
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
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		s.orig[name], s.modes[name] = data, fi.Mode().Perm()
	}
	if _, ok := s.orig[SandboxFile]; !ok {
		return nil, fmt.Errorf("%s has no %s", dir, SandboxFile)
	}
	return s, nil
}

// Current returns the content of name as this session sees it (edited or
// original) and whether the file exists.
func (s *Session) Current(name string) ([]byte, bool) {
	if b, ok := s.edited[name]; ok {
		return b, true
	}
	b, ok := s.orig[name]
	return b, ok
}

// Doc parses the current content of a YAML file of the session.
func (s *Session) Doc(name string) (*yamledit.Doc, *yaml.Node, error) {
	data, _ := s.Current(name)
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
func (s *Session) Save(name string, d *yamledit.Doc) error {
	b, err := d.Bytes()
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	s.Set(name, b)
	return nil
}

// Set records new content for file name.
func (s *Session) Set(name string, data []byte) {
	if old, ok := s.orig[name]; ok && bytes.Equal(old, data) {
		delete(s.edited, name)
		return
	}
	s.edited[name] = data
}

// Changed reports whether the session has anything to write.
func (s *Session) Changed() bool { return len(s.edited) > 0 }

// Commit checks the outer folder with the edited files in place of the old
// ones and, when the edit brings in no error, writes them all or nothing
// (atomically, each in its old mode; a new secrets.env gets 0600). When the
// edit would bring in errors it prints them, writes nothing and returns a
// SilentError. New warnings are printed after the write.
func (s *Session) Commit() error {
	if !s.Changed() {
		return nil
	}
	opts := schema.CheckOptions{Getenv: s.Getenv}
	before := s.checkFn(s.Dir, opts)
	opts.Overrides = map[string][]byte{}
	for name, data := range s.edited {
		opts.Overrides[name] = data
	}
	after := s.checkFn(s.Dir, opts)
	newErrs, newWarns := s.introduced(before, after)
	if len(newErrs) > 0 {
		fmt.Fprintf(s.IO.ErrOut, "asb: nothing was changed: the edit would make %s invalid:\n", s.names())
		for _, p := range newErrs {
			fmt.Fprintf(s.IO.ErrOut, "  %s\n", p)
		}
		return &cmdutil.SilentError{Code: 1}
	}
	var files []generator.PendingFile
	for _, name := range s.sortedEdited() {
		mode, ok := s.modes[name]
		if !ok {
			mode = generator.ModeFile
		}
		if name == SecretsEnvFile {
			mode = generator.ModeSecret // host only, whatever it was
		}
		files = append(files, generator.PendingFile{Path: filepath.Join(s.Dir, name), Data: s.edited[name], Mode: mode})
	}
	if err := generator.WriteFilesAtomic(files); err != nil {
		return fmt.Errorf("nothing was changed: %w", err)
	}
	for _, name := range s.sortedEdited() {
		s.orig[name] = s.edited[name]
	}
	s.edited = map[string][]byte{}
	for _, p := range newWarns {
		fmt.Fprintf(s.IO.ErrOut, "%s\n", p)
	}
	return nil
}

// introduced returns the problems of after, in the edited files, that before
// did not have (compared without their positions, which an edit moves).
func (s *Session) introduced(before, after []schema.Problem) (errs, warns []schema.Problem) {
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
		if _, edited := s.edited[filepath.ToSlash(p.File)]; !edited {
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

func (s *Session) sortedEdited() []string {
	var names []string
	for n := range s.edited {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (s *Session) names() string {
	names := s.sortedEdited()
	switch len(names) {
	case 1:
		return names[0]
	case 2:
		return names[0] + " and " + names[1]
	}
	out := ""
	for i, n := range names {
		switch {
		case i == len(names)-1:
			out += ", and " + n
		case i > 0:
			out += ", " + n
		default:
			out = n
		}
	}
	return out
}
