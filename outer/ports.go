package outer

import (
	"fmt"
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/agents-sandbox/asb/internal/yamledit"
	"github.com/agents-sandbox/asb/schema"
)

// AddPort forwards a host port into the VM (sandbox.yaml's ports) and
// commits it. A host port that is forwarded already is refused.
func (f *Folder) AddPort(spec string) (schema.PortSpec, []schema.Problem, error) {
	p, re := schema.Port(spec)
	if re != nil {
		return p, nil, schema.RuleField("port", re)
	}
	doc, root, err := f.Doc(SandboxFile)
	if err != nil {
		return p, nil, err
	}
	var specs []schema.PortSpec
	for _, seq := range portLists(root) {
		for _, it := range yamledit.Items(seq) {
			if q, err := schema.ParsePort(it.Value); err == nil {
				specs = append(specs, q)
			}
		}
	}
	if _, re := schema.PortConflict(append(specs, p)); re != nil {
		return p, nil, fmt.Errorf("port %w (asb port rm removes one)", re)
	}
	seq := yamledit.Get(root, "ports")
	if seq == nil || seq.Kind != yaml.SequenceNode {
		seq = yamledit.Seq()
		k := yamledit.Set(root, "ports", seq, schema.SandboxKeys)
		k.HeadComment = "# Host ports forwarded to the VM (bound to 127.0.0.1)."
		yamledit.SpaceBefore(k)
	}
	item := yamledit.Quoted(p.String())
	if len(seq.Content) > 0 {
		item = yamledit.String(p.String())
	}
	yamledit.Append(seq, item)
	if err := f.Save(SandboxFile, doc); err != nil {
		return p, nil, err
	}
	warns, err := f.Commit()
	return p, warns, err
}

// PortMatcher says which forwarded ports `asb port rm ARG` means: the entry
// (HOST:GUEST as asb port ls shows it) or, for a bare number, every entry
// of that host port.
func PortMatcher(arg string) (func(schema.PortSpec) bool, error) {
	if n, err := strconv.Atoi(arg); err == nil && strconv.Itoa(n) == arg {
		if n < 1 || n > 65535 {
			return nil, fmt.Errorf("port %q must be a number from 1 to 65535", arg)
		}
		return func(q schema.PortSpec) bool { return q.Host == n }, nil
	}
	p, err := schema.ParsePort(arg)
	if err != nil {
		return nil, fmt.Errorf("%w; or give only the host port, e.g. asb port rm 8080", err)
	}
	return func(q schema.PortSpec) bool { return q.String() == p.String() }, nil
}

// RemovePorts removes every forwarded port match accepts and commits it; it
// returns the entries removed.
func (f *Folder) RemovePorts(arg string, match func(schema.PortSpec) bool) ([]string, []schema.Problem, error) {
	doc, root, err := f.Doc(SandboxFile)
	if err != nil {
		return nil, nil, err
	}
	var removed []string
	for _, seq := range portLists(root) {
		yamledit.Remove(seq, func(it *yaml.Node) bool {
			q, err := schema.ParsePort(it.Value)
			if err == nil && match(q) {
				removed = append(removed, it.Value)
				return true
			}
			return false
		})
	}
	if len(removed) == 0 {
		return nil, nil, fmt.Errorf("no forwarded port matches %q; asb port ls lists them", arg)
	}
	if p := yamledit.Get(root, "ports"); p != nil && p.Kind == yaml.SequenceNode && len(p.Content) == 0 {
		yamledit.Delete(root, "ports")
	}
	if nw := yamledit.Get(root, "network"); nw != nil {
		if p := yamledit.Get(nw, "ports"); p != nil && p.Kind == yaml.SequenceNode && len(p.Content) == 0 {
			yamledit.Delete(nw, "ports")
		}
	}
	if err := f.Save(SandboxFile, doc); err != nil {
		return nil, nil, err
	}
	warns, err := f.Commit()
	return removed, warns, err
}

// portLists returns the sequences of sandbox.yaml that hold ports: the
// top-level ports and network.ports.
func portLists(root *yaml.Node) []*yaml.Node {
	var out []*yaml.Node
	if p := yamledit.Get(root, "ports"); p != nil && p.Kind == yaml.SequenceNode {
		out = append(out, p)
	}
	if nw := yamledit.Get(root, "network"); nw != nil {
		if p := yamledit.Get(nw, "ports"); p != nil && p.Kind == yaml.SequenceNode {
			out = append(out, p)
		}
	}
	return out
}
