package outer

import (
	"fmt"
	"strings"

	"github.com/agents-sandbox/asb/internal/folderfs"
	"github.com/agents-sandbox/asb/schema"
)

// SessionOfConf names the session whose derived config rel is
// (.asb/sessions/NAME/sandbox.yaml), or "" with ok false for anything else.
func SessionOfConf(rel string) (name string, ok bool) {
	rest, found := strings.CutPrefix(strings.TrimPrefix(rel, "./"), schema.SessionsDir+"/")
	if !found {
		return "", false
	}
	name, file, found := strings.Cut(rest, "/")
	if !found || file != SandboxFile || schema.SessionName(name) != nil {
		return "", false
	}
	return name, true
}

// CheckSessionConf judges session s's derived config as validate judges
// sandbox.yaml (schema.CheckDir, with it in sandbox.yaml's place), after
// checking that it is asb's derivation of the current sandbox.yaml: one
// edited by hand, or left from an older sandbox.yaml, is an error (asb
// task --session writes it again). Problems name the derived file.
func CheckSessionConf(dir string, s Session, opts schema.CheckOptions) []schema.Problem {
	at := func(msg, fix string) []schema.Problem {
		return []schema.Problem{{File: s.Paths.Conf, Line: 1, Col: 1, Severity: schema.SeverityError, Msg: msg, Fix: fix}}
	}
	r, err := folderfs.Open(dir)
	if err != nil {
		return at(err.Error(), "")
	}
	defer r.Close()
	sandbox, err := r.ReadFile(SandboxFile, schema.MaxFileSize)
	if err != nil {
		return at(fmt.Sprintf("read %s: %v", SandboxFile, err), "")
	}
	want, err := DeriveSessionConf(sandbox, s, dir)
	if err != nil {
		return at(err.Error(), "asb task --session "+s.Name+" gives every port a host port of the session's")
	}
	got, err := r.ReadFile(s.Paths.Conf, schema.MaxFileSize)
	if err != nil || string(got) != string(want) {
		return at("is not asb's derivation of the current sandbox.yaml (edited by hand, sandbox.yaml changed since, or the folder moved: it names the folder's files by its path)",
			"edit sandbox.yaml instead; asb task --session "+s.Name+" writes this file again")
	}
	asFolder, err := sessionConfAsFolder(sandbox, s)
	if err != nil {
		return at(err.Error(), "")
	}
	o := opts
	o.Overrides = map[string][]byte{SandboxFile: asFolder}
	var out []schema.Problem
	for _, p := range schema.CheckDir(dir, o) {
		if p.File == SandboxFile {
			p.File = s.Paths.Conf
		} else {
			continue // the folder's own files: validate reports them once
		}
		out = append(out, p)
	}
	return out
}

// ForSession makes f describe session s's VM: its sandbox.yaml becomes the
// one asb derives for s, in memory only (asb boundary --session; nothing
// is written, and Commit is not for such a folder).
func (f *Folder) ForSession(s Session) error {
	data, _ := f.Current(SandboxFile)
	conf, err := sessionConfAsFolder(data, s)
	if err != nil {
		return err
	}
	f.edited[SandboxFile] = conf
	return nil
}
