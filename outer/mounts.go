package outer

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agents-sandbox/asb/internal/yamledit"
	"github.com/agents-sandbox/asb/schema"
)

// HomeTarget is where the persistent home volume is mounted (by the
// Taskfile's vm:create, not by sandbox.yaml).
const HomeTarget = "/home/dev"

// MountRequest is a host folder to show in the VM (`asb mount add`).
type MountRequest struct {
	HostPath string // as the user gave it: relative to WorkDir, ~/…, or absolute
	WorkDir  string // the working directory HostPath is relative to
	Guest    string // absolute path in the VM
	ReadOnly bool
	// AllowHome is the user's consent to a folder under $HOME: the mount
	// is written with the schema.HomeConsent comment.
	AllowHome bool
}

// MountEdit says what AddMount did.
type MountEdit struct {
	Host     string // the resolved host folder
	Source   string // as sandbox.yaml writes it: ./PATH inside the outer folder, else absolute
	Guest    string
	Warnings []schema.Problem
	consent  string
}

// AgentTargets returns the guest paths the agent presets mount their config
// at, e.g. /home/dev/.config/opencode.
func (f *Folder) AgentTargets() []string {
	var out []string
	for _, a := range f.Agents {
		out = append(out, a.MountTarget)
	}
	return out
}

// AddMount adds a bind mount to sandbox.yaml and commits it, after the
// mount policy (schema.MountRules) has judged both of its sides.
func (f *Folder) AddMount(r MountRequest) (MountEdit, error) {
	e := MountEdit{Guest: path.Clean(r.Guest)}
	rules := f.mountRules()
	if re := rules.GuestPath(r.Guest, false); re != nil {
		return e, schema.RuleField("GUEST_PATH", re)
	}
	var err error
	if e.Host, e.Source, err = f.bindSource(r); err != nil {
		return e, err
	}
	if re := schema.HostKind(e.Host); re != nil {
		return e, schema.RuleField("HOST_PATH", re)
	}
	if re := rules.HostFolder(e.Host, r.AllowHome); re != nil {
		return e, schema.RuleField("HOST_PATH", re)
	}
	e.consent = rules.Consent(e.Host) // the comment --allow-home writes (i22)
	doc, root, err := f.Doc(SandboxFile)
	if err != nil {
		return e, err
	}
	mounts := yamledit.Get(root, "mounts")
	if mounts == nil || mounts.Kind != yaml.SequenceNode {
		if mounts != nil {
			return e, errors.New("sandbox.yaml: mounts is not a list; fix it by hand (asb validate explains)")
		}
		mounts = yamledit.Seq()
		yamledit.SpaceBefore(yamledit.Set(root, "mounts", mounts, schema.SandboxKeys))
	}
	for _, it := range yamledit.Items(mounts) {
		if guestOf(it) == e.Guest {
			return e, fmt.Errorf("%s is mounted already; remove it first: asb mount rm %s", e.Guest, e.Guest)
		}
	}
	yamledit.Append(mounts, newBind(e, r))
	if err := f.Save(SandboxFile, doc); err != nil {
		return e, err
	}
	e.Warnings, err = f.Commit()
	return e, err
}

func newBind(e MountEdit, r MountRequest) *yaml.Node {
	m := yamledit.Map()
	src := yamledit.Quoted(e.Source)
	if r.AllowHome {
		src.LineComment = "# " + e.consent
	}
	yamledit.Set(m, "bind", src, nil)
	yamledit.Set(m, "target", yamledit.Quoted(e.Guest), nil)
	if r.ReadOnly {
		yamledit.Set(m, "readonly", yamledit.Bool(true), nil)
	}
	return m
}

// mountRules is the mount policy for this folder.
func (f *Folder) mountRules() schema.MountRules {
	home := ""
	if h := f.Getenv("HOME"); filepath.IsAbs(h) {
		home = schema.ResolvePath(filepath.Clean(h))
	}
	own := append([]string{schema.WorkspaceMount, HomeTarget}, f.AgentTargets()...)
	return schema.MountRules{Dir: schema.ResolvePath(f.Dir), Home: home, Getenv: f.Getenv, Own: own}
}

// bindSource resolves r.HostPath and returns it absolute and as
// sandbox.yaml should write it.
func (f *Folder) bindSource(r MountRequest) (abs, rel string, err error) {
	p := r.HostPath
	if p == "~" || strings.HasPrefix(p, "~/") {
		home := f.Getenv("HOME")
		if home == "" {
			return "", "", fmt.Errorf("HOST_PATH %q starts with ~ but $HOME is not set", p)
		}
		p = filepath.Join(home, strings.TrimPrefix(p, "~"))
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(r.WorkDir, p)
	}
	p = filepath.Clean(p)
	dir := f.Dir
	if res, err := filepath.EvalSymlinks(dir); err == nil {
		dir = res
	}
	real := p
	if res, err := filepath.EvalSymlinks(p); err == nil {
		real = res
	}
	if res, err := filepath.Rel(dir, real); err == nil && res != "." && !strings.HasPrefix(res, "..") {
		return real, "./" + filepath.ToSlash(res), nil
	}
	return real, real, nil
}

// RemoveMount removes the mount at guest from sandbox.yaml and commits it.
func (f *Folder) RemoveMount(guest string) ([]schema.Problem, error) {
	guest = path.Clean(guest)
	doc, root, err := f.Doc(SandboxFile)
	if err != nil {
		return nil, err
	}
	if yamledit.Remove(yamledit.Get(root, "mounts"), func(it *yaml.Node) bool { return guestOf(it) == guest }) == 0 {
		return nil, fmt.Errorf("nothing is mounted at %s; asb mount ls lists the mounts", guest)
	}
	if err := f.Save(SandboxFile, doc); err != nil {
		return nil, err
	}
	return f.Commit()
}

// guestOf returns the guest path of a mounts entry.
func guestOf(n *yaml.Node) string {
	switch n.Kind {
	case yaml.ScalarNode:
		if _, g, _, err := schema.ParseShortMount(n.Value); err == nil {
			return path.Clean(g)
		}
	case yaml.MappingNode:
		if t := yamledit.Get(n, "target"); t != nil {
			return path.Clean(t.Value)
		}
	}
	return ""
}
