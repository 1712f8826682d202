package outer

import (
	"fmt"
	"io"
	"path"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agents-sandbox/asb/internal/yamledit"
	"github.com/agents-sandbox/asb/schema"
)

// LimitView is one of the VM's limits (schema.Limits) as the folder sets it.
type LimitView struct {
	Name  string `json:"name"`
	Value string `json:"value"` // "" when unset
	Where string `json:"where"` // sandbox.yaml or Taskfile.yml
	What  string `json:"what"`
}

// LimitsOf reads every limit from the folder's sandbox.yaml and Taskfile.yml.
func (f *Folder) LimitsOf() []LimitView {
	data, _ := f.Current(SandboxFile)
	return limitsOf(data, f.taskVars())
}

// LimitsIn is LimitsOf of the contents of a folder's sandbox.yaml and
// Taskfile.yml, read by the caller (asb export reads them through the
// folder's confined root, and opens nothing else).
func LimitsIn(sandbox, taskfile []byte) []LimitView {
	return limitsOf(sandbox, taskVarsOf(taskfile))
}

func limitsOf(data []byte, vars map[string]string) []LimitView {
	sb, _, _ := schema.LoadSandbox(SandboxFile, data)
	if sb == nil {
		sb = &schema.Sandbox{}
	}
	out := make([]LimitView, 0, len(schema.Limits))
	for _, l := range schema.Limits {
		v := LimitView{Name: l.Name, Where: l.Where, What: l.What}
		switch l.Name {
		case schema.LimitIdleTimeout:
			v.Value = sb.IdleTimeout
		case schema.LimitMaxDuration:
			v.Value = sb.MaxDuration
		case schema.LimitTmpSize:
			for _, m := range sb.Mounts {
				if schema.IsTmpLimit(m) && m.Tmpfs != nil {
					v.Value = m.Tmpfs.Size
				}
			}
		case schema.LimitWorkspaceQuota:
			for _, m := range sb.Mounts {
				if path.Clean(m.Target) == schema.WorkspaceMount && m.Short != "" {
					if parts := strings.SplitN(m.Short, ":", 3); len(parts) == 3 {
						v.Value = schema.WorkspaceQuota(parts[2])
					}
				}
			}
		default:
			v.Value = vars[l.Key]
		}
		out = append(out, v)
	}
	return out
}

// PrintLimits writes the limits section.
func PrintLimits(w io.Writer, limits []LimitView) {
	fmt.Fprintln(w, "Limits (asb limit set NAME VALUE changes them):")
	for _, l := range limits {
		v := l.Value
		if v == "" {
			v = "none"
		}
		fmt.Fprintf(w, "  %-16s %-8s %s (%s)\n", l.Name, v, l.What, l.Where)
	}
}

// SetLimit sets the limit name to value ("" or "none": unset; a limit of
// Taskfile.yml gets asb's default back) and commits the edit.
func (f *Folder) SetLimit(name, value string) ([]schema.Problem, error) {
	l, re := schema.LookupLimit(name)
	if re != nil {
		return nil, schema.RuleField("limit", re)
	}
	if value == "none" {
		value = ""
	}
	if value != "" {
		if re := schema.Limit(name, value); re != nil {
			return nil, schema.RuleField(name, re)
		}
	}
	var err error
	switch {
	case l.Where == schema.InTaskfile:
		err = f.setTaskVar(l.Key, value, name)
	case name == schema.LimitTmpSize:
		err = f.setTmpSize(value)
	case name == schema.LimitWorkspaceQuota:
		err = f.setWorkspaceQuota(value)
	default:
		err = f.setSandboxKey(l.Key, value)
	}
	if err != nil {
		return nil, err
	}
	return f.Commit()
}

func (f *Folder) setSandboxKey(key, value string) error {
	doc, root, err := f.Doc(SandboxFile)
	if err != nil {
		return err
	}
	if value == "" {
		yamledit.Delete(root, key)
	} else {
		yamledit.Set(root, key, yamledit.Quoted(value), schema.SandboxKeys)
	}
	return f.Save(SandboxFile, doc)
}

// setTaskVar sets a var of Taskfile.yml; "" restores asb's default.
func (f *Folder) setTaskVar(key, value, name string) error {
	if value == "" {
		switch name {
		case schema.LimitRootDisk:
			value = schema.DefaultRootDisk
		case schema.LimitContainerDisk:
			value = schema.DefaultContainerDisk
		}
	}
	doc, root, err := f.Doc(schema.TaskfileFile)
	if err != nil {
		return err
	}
	vars := yamledit.Get(root, "vars")
	if vars == nil || vars.Kind != yaml.MappingNode {
		return fmt.Errorf("%s has no vars: section; asb update restores it", schema.TaskfileFile)
	}
	yamledit.Set(vars, key, yamledit.Quoted(value), nil)
	return f.Save(schema.TaskfileFile, doc)
}

// mountItems returns sandbox.yaml's document and its mounts sequence.
func (f *Folder) mountItems() (*yamledit.Doc, *yaml.Node, error) {
	doc, root, err := f.Doc(SandboxFile)
	if err != nil {
		return nil, nil, err
	}
	seq := yamledit.Get(root, "mounts")
	if seq == nil || seq.Kind != yaml.SequenceNode {
		return nil, nil, fmt.Errorf("%s has no mounts list; asb validate explains", SandboxFile)
	}
	return doc, seq, nil
}

func (f *Folder) setTmpSize(value string) error {
	doc, seq, err := f.mountItems()
	if err != nil {
		return err
	}
	isTmp := func(it *yaml.Node) bool {
		return it.Kind == yaml.MappingNode && yamledit.Get(it, "tmpfs") != nil &&
			yamledit.Get(it, "target") != nil && path.Clean(yamledit.Get(it, "target").Value) == schema.TmpMount
	}
	if value == "" {
		yamledit.Remove(seq, isTmp)
		return f.Save(SandboxFile, doc)
	}
	for _, it := range yamledit.Items(seq) {
		if isTmp(it) {
			opts := yamledit.Get(it, "tmpfs")
			if opts.Kind != yaml.MappingNode {
				opts = yamledit.Map()
				yamledit.Set(it, "tmpfs", opts, schema.MountKeys)
			}
			yamledit.Set(opts, "size", yamledit.Quoted(value), nil)
			return f.Save(SandboxFile, doc)
		}
	}
	opts := yamledit.Map()
	opts.Style = yaml.FlowStyle
	yamledit.Set(opts, "size", yamledit.Quoted(value), nil)
	item := yamledit.Map()
	yamledit.Set(item, "tmpfs", opts, schema.MountKeys)
	yamledit.Set(item, "target", yamledit.String(schema.TmpMount), schema.MountKeys)
	item.Content[0].HeadComment = "# /tmp in the VM's memory (emptied at each start)."
	yamledit.Append(seq, item)
	return f.Save(SandboxFile, doc)
}

// setWorkspaceQuota writes the workspace mount in the string form, the
// one whose quota= option msb 0.7.2 reads ("./workspace:/workspace:quota=8G").
func (f *Folder) setWorkspaceQuota(value string) error {
	doc, seq, err := f.mountItems()
	if err != nil {
		return err
	}
	for i, it := range seq.Content {
		src, opts, ok := workspaceShort(it)
		if !ok {
			continue
		}
		var keep []string
		for o := range strings.SplitSeq(opts, ",") {
			if o != "" && !strings.HasPrefix(o, "quota=") {
				keep = append(keep, o)
			}
		}
		if value != "" {
			keep = append(keep, "quota="+value)
		}
		s := src + ":" + schema.WorkspaceMount
		if len(keep) > 0 {
			s += ":" + strings.Join(keep, ",")
		}
		n := yamledit.Quoted(s)
		n.HeadComment, n.LineComment = it.HeadComment, it.LineComment
		if it.Kind == yaml.MappingNode && len(it.Content) > 0 {
			n.HeadComment = it.Content[0].HeadComment
		}
		seq.Content[i] = n
		return f.Save(SandboxFile, doc)
	}
	return fmt.Errorf("no mount of %s at %s that asb can give a quota (a bind with only bind, target, readonly, host_permissions and stat_virtualization); write it by hand as \"./workspace:/workspace:quota=SIZE\"",
		SandboxFile, schema.WorkspaceMount)
}

// workspaceShort reads the workspace mount item as the string form's
// source and options; ok is false for another mount, or for a mapping with
// keys the string form cannot write.
func workspaceShort(it *yaml.Node) (src, opts string, ok bool) {
	if it.Kind == yaml.ScalarNode {
		parts := strings.SplitN(it.Value, ":", 3)
		if len(parts) < 2 || path.Clean(parts[1]) != schema.WorkspaceMount {
			return "", "", false
		}
		if len(parts) == 3 {
			opts = parts[2]
		}
		return parts[0], opts, true
	}
	if it.Kind != yaml.MappingNode {
		return "", "", false
	}
	t, b := yamledit.Get(it, "target"), yamledit.Get(it, "bind")
	if t == nil || b == nil || path.Clean(t.Value) != schema.WorkspaceMount {
		return "", "", false
	}
	var o []string
	for _, k := range yamledit.Keys(it) {
		v := yamledit.Get(it, k).Value
		switch k {
		case "bind", "target":
		case "readonly":
			if v == "true" {
				o = append(o, "ro")
			}
		case "host_permissions": // the string form's host-perms= (msb 0.7.2 reads both)
			o = append(o, "host-perms="+v)
		case "stat_virtualization":
			o = append(o, "stat-virt="+v)
		default:
			return "", "", false
		}
	}
	return b.Value, strings.Join(o, ","), true
}
