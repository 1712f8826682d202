// Package generator turns `asb init` options into a plan of files. Rendering
// is pure: options and a template tree in, a Plan out, no I/O on the host.
// Apply (writer.go) is the only part that touches the disk.
package generator

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"
	"text/template"

	"github.com/agents-sandbox/asb/schema"
)

// Modes of the files asb writes.
const (
	ModeFile   fs.FileMode = 0o644
	ModeSecret fs.FileMode = 0o600
	ModeDir    fs.FileMode = 0o755
)

// File is one entry of a plan: a regular file with its content, or a folder.
type File struct {
	Path    string // slash-separated, relative to the outer folder
	Mode    fs.FileMode
	Content []byte
	Dir     bool
	// Preserve marks a file that belongs to the user once it exists
	// (secrets.env): it is never replaced, not even with --force, and never
	// copied to a .orig file, since it may hold real credentials.
	Preserve bool
	// AppendLines marks a file whose lines are required, not its whole
	// content (.gitignore): an existing file keeps every line it has and
	// gets the plan's lines it lacks appended, never a line removed.
	AppendLines bool
}

// Plan is the whole outer folder, sorted by path.
type Plan struct {
	Files []File
}

// Lookup returns the entry at path p.
func (p *Plan) Lookup(rel string) (File, bool) {
	for _, f := range p.Files {
		if f.Path == rel {
			return f, true
		}
	}
	return File{}, false
}

// Put adds f to the plan, or replaces the entry at its path, with an entry
// for each folder above it, keeping the plan sorted by path.
func (p *Plan) Put(f File) {
	for dir := path.Dir(f.Path); dir != "." && dir != "/"; dir = path.Dir(dir) {
		if _, ok := p.Lookup(dir); !ok {
			p.Files = append(p.Files, File{Path: dir, Mode: ModeDir, Dir: true})
		}
	}
	if i := slices.IndexFunc(p.Files, func(e File) bool { return e.Path == f.Path }); i >= 0 {
		p.Files[i] = f
	} else {
		p.Files = append(p.Files, f)
	}
	sort.Slice(p.Files, func(i, j int) bool { return p.Files[i].Path < p.Files[j].Path })
}

// Secret is a credential binding as the templates see it.
type Secret struct {
	Name        string
	Hosts       []string
	Query, Body bool
}

// Data is what the templates render from. Every value in it has been
// validated; the templates still quote each one where it reaches YAML or a
// shell (yq, sq).
type Data struct {
	Name         string
	Agent        schema.Agent
	Also         []schema.Agent // further agents in the same VM (asb agent add)
	Layers       []AgentLayer   // every agent's part of the image: Agent's first, then Also's
	CPUs         int
	Memory       string
	Network      string
	Limits       Limits
	Hosts        []string           // egress allow list: the agent's, each secret's, --allow
	Balanced     []schema.HostGroup // --network balanced: the common development hosts not in Hosts
	Secrets      []Secret           // the agent's key first
	Ports        []string
	BaseImage    string
	AgentVersion string
	NPMVersion   string // npm installed in the image (Debian's nodejs ships none)
	Workspace    string // origin of workspace/, when cloned
	Image        string // default msb image reference
	BuildTag     string // default builder tag
	VM           string // default VM name
	HomeVolume   string // default home volume name
	SchemaURL    string // base URL of the JSON Schemas, "" for none
}

// Limits are the VM's limits as the templates write them (asb's defaults
// filled in; TmpSize and WorkspaceQuota may be "": none).
type Limits struct {
	IdleTimeout, RootDisk, TmpSize, WorkspaceQuota, ContainerDisk string
}

// NPMVersion is the npm the image installs: the newest 11.x, which still
// runs on Debian trixie's Node.js 20 (npm 12 needs Node.js 22.22).
const NPMVersion = "11.6.2"

// SchemaURL is where editors find the JSON Schemas of sandbox.yaml and
// secrets.yaml: the outer folder's own copies in .schemas/, relative to
// the files (so the link resolves on every clone, offline too).
const SchemaURL = "./" + schema.SchemaDir + "/"

// DefaultOptions are the options of a plain `asb init --agent AGENT`.
func DefaultOptions(agent, name string) schema.InitOptions {
	return schema.InitOptions{
		Agent:     agent,
		Name:      name,
		CPUs:      2,
		Memory:    "4G",
		Network:   schema.NetworkAllow,
		BaseImage: "debian:trixie-slim",
	}
}

// NewData validates opts and computes what the templates need.
func NewData(tree fs.FS, opts schema.InitOptions) (*Data, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	agent, err := LoadAgent(tree, opts.Agent)
	if err != nil {
		return nil, err
	}
	if opts.Network == schema.NetworkPublic && len(opts.Allow) > 0 {
		// It would be dropped without a word: public already allows every
		// public host, and sandbox.yaml then has no allow list.
		return nil, &schema.FieldError{Field: "--allow", Value: opts.Allow[0],
			Fix: "--network public already allows every public host; drop --allow, or use --network allow to list hosts"}
	}
	d := &Data{
		Name:    opts.Name,
		Agent:   agent,
		CPUs:    opts.CPUs,
		Memory:  opts.Memory,
		Network: opts.Network,
		Limits: Limits{
			IdleTimeout:    cmp.Or(opts.IdleTimeout, schema.DefaultIdleTimeout),
			RootDisk:       cmp.Or(opts.RootDisk, schema.DefaultRootDisk),
			TmpSize:        opts.TmpSize,
			WorkspaceQuota: opts.WorkspaceQuota,
			ContainerDisk:  cmp.Or(opts.ContainerDisk, schema.DefaultContainerDisk),
		},
		Ports:        opts.Ports,
		BaseImage:    opts.BaseImage,
		AgentVersion: cmp.Or(opts.AgentVersion, agent.Version),
		NPMVersion:   NPMVersion,
		Workspace:    opts.Workspace,
		Image:        opts.Name + ":" + agent.Name + "-latest",
		BuildTag:     "agents-sandbox/runner-" + opts.Name + ":" + agent.Name + "-latest",
		VM:           opts.Name + "-" + agent.Name,
		HomeVolume:   opts.Name + "-" + agent.Name + "-home",
		SchemaURL:    SchemaURL,
	}
	if err := d.addAlso(tree, opts.Also); err != nil {
		return nil, err
	}
	if err := d.addSecrets(opts.Secrets); err != nil {
		return nil, err
	}
	d.addHosts(opts)
	return d, nil
}

// Render validates opts and renders the whole outer folder.
func Render(tree fs.FS, opts schema.InitOptions) (*Plan, error) {
	d, err := NewData(tree, opts)
	if err != nil {
		return nil, err
	}
	plan, err := RenderData(tree, d)
	if err != nil {
		return nil, err
	}
	return plan, withRecord(plan, opts, d.AgentVersion)
}

// RenderData renders the tree for already validated data.
func RenderData(tree fs.FS, d *Data) (*Plan, error) {
	plan := &Plan{}
	// One template set for every file.
	base := template.New("").Delims("[[", "]]").Funcs(Funcs()).Option("missingkey=error")
	if err := renderTree(tree, "base", "", d, base, plan); err != nil {
		return nil, err
	}
	cfg := path.Join("agents", d.Agent.Name, "config")
	plan.Files = append(plan.Files, File{Path: d.Agent.ConfigDir, Mode: ModeDir, Dir: true})
	if err := renderTree(tree, cfg, d.Agent.ConfigDir, d, base, plan); err != nil {
		return nil, err
	}
	for _, a := range d.Also {
		// Each agent's config templates see that agent as .Agent.
		da := *d
		da.Agent = a
		plan.Files = append(plan.Files, File{Path: a.ConfigDir, Mode: ModeDir, Dir: true})
		if err := renderTree(tree, path.Join("agents", a.Name, "config"), a.ConfigDir, &da, base, plan); err != nil {
			return nil, err
		}
	}
	plan.Files = append(plan.Files, File{Path: "workspace", Mode: ModeDir, Dir: true})
	sort.Slice(plan.Files, func(i, j int) bool { return plan.Files[i].Path < plan.Files[j].Path })
	return plan, nil
}

func renderTree(tree fs.FS, root, dest string, d *Data, base *template.Template, plan *Plan) error {
	return fs.WalkDir(tree, root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
		if rel == "" {
			return nil
		}
		out := path.Join(dest, outputName(rel))
		if e.IsDir() {
			plan.Files = append(plan.Files, File{Path: out, Mode: ModeDir, Dir: true})
			return nil
		}
		raw, err := fs.ReadFile(tree, p)
		if err != nil {
			return err
		}
		content := raw
		if strings.HasSuffix(rel, ".tmpl") {
			if content, err = execute(base, p, string(raw), d); err != nil {
				return err
			}
		}
		f := File{Path: out, Mode: ModeFile, Content: content}
		switch out {
		case "secrets.env":
			f.Mode, f.Preserve = ModeSecret, true
		case ".gitignore":
			f.AppendLines = true // an existing repository's own .gitignore
		}
		plan.Files = append(plan.Files, f)
		return nil
	})
}

// outputName maps a template path to the path it renders to.
func outputName(rel string) string {
	parts := strings.Split(strings.TrimSuffix(rel, ".tmpl"), "/")
	for i, p := range parts {
		if rest, ok := strings.CutPrefix(p, "dot-"); ok {
			parts[i] = "." + rest
		}
	}
	return strings.Join(parts, "/")
}

func execute(base *template.Template, name, text string, d *Data) ([]byte, error) {
	t, err := base.New(name).Parse(text)
	if err != nil {
		return nil, fmt.Errorf("template %s: %w", name, err)
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, d); err != nil {
		return nil, fmt.Errorf("template %s: %w", name, err)
	}
	return buf.Bytes(), nil
}

// Funcs are the templates' functions beside text/template's own: asb's
// quoting helpers, and nothing else (a template library's hundreds of
// functions cost every asb start their packages' initialisation, for none
// that a template used):
//   - yq: a YAML double-quoted scalar (a JSON string is one), safe for any value;
//   - sq: a POSIX shell single-quoted word;
//   - ysq: the inside of a YAML single-quoted scalar (its ' doubled);
//   - jq: a JSON string.
func Funcs() template.FuncMap {
	return template.FuncMap{
		"yq":  jsonString,
		"jq":  jsonString,
		"sq":  ShellQuote,
		"ysq": func(s string) string { return strings.ReplaceAll(s, "'", "''") },
	}
}

func jsonString(v any) (string, error) {
	b, err := json.Marshal(fmt.Sprint(v))
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// ShellQuote quotes s as one POSIX shell word.
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r == '/' || r == ':' || r == '@' || r == '=' || r == ',' ||
			(r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9'))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func dedup(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
