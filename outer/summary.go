package outer

import (
	"cmp"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agents-sandbox/asb/internal/yamledit"
	"github.com/agents-sandbox/asb/runner"
	"github.com/agents-sandbox/asb/schema"
)

// Boundary is what the agent in the VM can reach, as `asb boundary` shows
// it. It never holds a secret value.
type Boundary struct {
	Dir         string       `json:"dir"`
	Mounts      []MountView  `json:"mounts"`
	Home        *HomeView    `json:"home,omitempty"`
	AgentConfig *AgentView   `json:"agent_config,omitempty"`
	Network     NetworkView  `json:"network"`
	Ports       []PortView   `json:"ports"`
	Secrets     []SecretView `json:"secrets"`
	// Settings are the other keys of sandbox.yaml that reach msb, each
	// with the key table's verdict (settings.go).
	Settings []SettingView `json:"settings"`
	// Limits are the VM's idle stop and sizes (limits.go).
	Limits []LimitView `json:"limits"`
	// Problems are what kept a file from being read in full.
	Problems []string `json:"problems,omitempty"`
}

// MountView is one folder the guest sees.
type MountView struct {
	Guest  string `json:"guest"`
	Kind   string `json:"kind"`             // bind, named, tmpfs, disk
	Source string `json:"source,omitempty"` // as written in sandbox.yaml
	Host   string `json:"host,omitempty"`   // absolute host path of a bind, links followed: what the VM sees
	// Via is the path as written, made absolute, when a link on it leads
	// to Host (msb does not follow it: refused, see schema.BindLink).
	Via    string `json:"via,omitempty"`
	Access string `json:"access"`         // rw or ro
	Role   string `json:"role,omitempty"` // workspace, agent-config
	// UnderHome: the host folder is under your $HOME (and outside this
	// folder), which the mount policy allows only with its consent comment.
	UnderHome bool `json:"under_home,omitempty"`
	// Outside: the host folder (symlinks followed) is outside this folder
	// and outside $HOME: allowed only by # asb: allow-host.
	Outside bool `json:"outside,omitempty"`
	// Verdict is the key table's: shown, boundary-widening (a named
	// volume) or refused (a disk image, a ${…}, a bind of this folder).
	Verdict string `json:"verdict"`
	Refused string `json:"refused,omitempty"` // why, when refused
	// Modes is how a writable bind's file modes reach the host: "mirror"
	// (the rwx bits the VM sets) or "private" (msb's default: 0600 files,
	// 0700 folders, whatever the VM set).
	Modes string `json:"modes,omitempty"`
}

// HomeView is the persistent home volume.
type HomeView struct {
	Guest      string `json:"guest"`
	Volume     string `json:"volume,omitempty"` // empty until asb task creates it
	Persistent bool   `json:"persistent"`
	Note       string `json:"note"`
}

// AgentView says how the agent's config reaches the guest.
type AgentView struct {
	Agent    string `json:"agent"`
	Source   string `json:"source"`
	Target   string `json:"target"`
	ReadOnly bool   `json:"read_only"`
	// HostConfigCopied is always false: the config folder of the outer
	// folder is bind-mounted; nothing of the host's own agent config (in
	// $HOME) is copied into the VM when it runs. What asb init
	// --import-host-config copied (never a credential) is in Source.
	HostConfigCopied bool `json:"host_config_copied"`
}

// NetworkView is the egress policy.
type NetworkView struct {
	// Policy is allow-list (deny all but Allow), public (the public
	// internet, private ranges blocked), open (everything), none, or
	// default (no network key: msb's default, the public internet).
	Policy  string   `json:"policy"`
	Allow   []string `json:"allow"`
	Deny    []string `json:"deny"`
	Summary string   `json:"summary"`
	// Form is how sandbox.yaml writes it: absent, string, object.
	Form string `json:"form"`
}

// PortView is one forwarded port.
type PortView struct {
	Spec     string `json:"spec"`
	Bind     string `json:"bind"`
	Host     int    `json:"host"`
	Guest    int    `json:"guest"`
	Protocol string `json:"protocol"`
}

// SecretView is one credential binding, by name only.
type SecretView struct {
	Name    string   `json:"name"`
	Hosts   []string `json:"hosts"`
	Headers bool     `json:"headers"`
	Query   bool     `json:"query"`
	Body    bool     `json:"body"`
	// Set says whether the host has a value (exported, or in secrets.env);
	// From says where. The value itself is never read into the summary.
	Set  bool   `json:"set"`
	From string `json:"from,omitempty"`
	// CommandMissing says why the command of a secret From a command
	// cannot run on this host (its program is not found), judged without
	// running it.
	CommandMissing string `json:"command_missing,omitempty"`
	// Refused: the binding has errors (asb validate says which); it
	// stops vm:create.
	Refused bool `json:"refused,omitempty"`
}

// Summarize builds the boundary from the folder's current files.
func (f *Folder) Summarize() *Boundary {
	b := &Boundary{Dir: f.Dir, Mounts: []MountView{}, Ports: []PortView{}, Secrets: []SecretView{}, Settings: []SettingView{}}
	data, _ := f.Current(SandboxFile)
	sb, root, probs := schema.LoadSandbox(SandboxFile, data)
	for _, p := range probs {
		if p.Severity == schema.SeverityError {
			b.Problems = append(b.Problems, p.String())
		}
	}
	if sb == nil {
		sb = &schema.Sandbox{}
	}
	agents := f.agentPresets()
	for _, m := range sb.Mounts {
		mv := f.mountView(m)
		if mv.Guest == "/workspace" {
			mv.Role = "workspace"
		}
		for _, a := range agents {
			if mv.Guest == a.MountTarget && mv.Kind == "bind" {
				mv.Role = "agent-config"
				b.AgentConfig = &AgentView{Agent: a.Name, Source: mv.Source, Target: mv.Guest, ReadOnly: m.Readonly}
			}
		}
		b.Mounts = append(b.Mounts, mv)
	}
	b.Home = f.home()
	b.Network = NetworkOf(sb.Network)
	for _, spec := range slices.Concat(sb.Ports, networkPorts(sb.Network)) {
		p, err := schema.ParsePort(spec)
		if err != nil {
			continue
		}
		bind := p.Bind
		if bind == "" {
			bind = "127.0.0.1"
		}
		b.Ports = append(b.Ports, PortView{Spec: spec, Bind: bind, Host: p.Host, Guest: p.Guest, Protocol: p.Protocol})
	}
	b.Secrets = f.secrets(&b.Problems)
	b.Settings = settings(root)
	b.Limits = f.LimitsOf()
	return b
}

// HostPath returns the absolute host path of a bind source as msb resolves
// it: relative to the outer folder, where asb task runs msb.
func (f *Folder) HostPath(src string) string {
	if home := f.Getenv("HOME"); filepath.IsAbs(home) && (src == "~" || strings.HasPrefix(src, "~/")) {
		return filepath.Join(home, strings.TrimPrefix(src, "~"))
	}
	if filepath.IsAbs(src) {
		return filepath.Clean(src)
	}
	return filepath.Join(f.Dir, filepath.FromSlash(src))
}

func networkPorts(nw *schema.Network) []string {
	if nw == nil {
		return nil
	}
	return nw.Ports
}

// NetworkOf interprets the network key as msb 0.7.2 resolves it (observed
// with `msb inspect`): a string none/public/open; an object with a non-empty
// allow list denies all other egress (whatever its policy, except open); an
// object without allow (or with an empty one) is its policy, public by
// default, minus the deny list. Deny rules come first, so they win.
func NetworkOf(nw *schema.Network) NetworkView {
	v := NetworkView{Allow: []string{}, Deny: []string{}}
	switch {
	case nw == nil:
		v.Form, v.Policy = "absent", "default"
	case nw.Short:
		v.Form, v.Policy = "string", nw.Policy
	default:
		v.Form = "object"
		v.Allow = append(v.Allow, nw.Allow...)
		v.Deny = append(v.Deny, nw.Deny...)
		switch {
		case len(nw.Allow) > 0:
			// with allow entries msb denies the rest, whatever the policy
			// says (public's rule is dropped, open's allow-all too)
			v.Policy = "allow-list"
		case nw.Policy == "open":
			v.Policy = "open"
		case nw.Policy == "":
			v.Policy = "public"
		default:
			v.Policy = nw.Policy
		}
	}
	switch v.Policy {
	case "allow-list":
		v.Summary = "egress is denied except to the allowed hosts"
	case "public":
		v.Summary = "egress to the whole public internet (private addresses stay blocked)"
	case "open":
		v.Summary = "egress to everything, including your host's and your LAN's private addresses"
	case "none":
		v.Summary = "no network at all"
	case "default":
		v.Summary = "no network key: msb's default, egress to the whole public internet"
	default:
		v.Summary = fmt.Sprintf("policy %q", v.Policy)
	}
	if len(v.Deny) > 0 && v.Policy != "none" {
		v.Summary += "; the denied hosts are blocked even when an allow entry covers them"
	}
	return v
}

// Allows reports whether host is reachable under v (exactly, or through a
// "*.domain" entry), ignoring deny rules.
func (v NetworkView) Allows(host string) bool {
	switch v.Policy {
	case "public", "open", "default":
		return true
	case "allow-list":
		return slices.ContainsFunc(v.Allow, func(a string) bool { return schema.EntryCovers(a, host) })
	}
	return false
}

func (f *Folder) home() *HomeView {
	h := &HomeView{Guest: HomeTarget, Persistent: true}
	vars := f.taskVars()
	if !strings.Contains(vars["_cmd"], HomeTarget) {
		return nil // this Taskfile mounts no home volume
	}
	st, err := runner.ReadState(f.Dir)
	switch {
	case err == nil && st.HomeVolume != "":
		h.Volume = st.HomeVolume
		h.Note = "a named volume, kept when the VM is removed or rebuilt (recorded in .asb/state.yaml)"
	default:
		h.Note = "a named volume for this clone of " + cmp.Or(vars["PROJECT"], filepath.Base(f.Dir)) +
			", created by the first `asb task` and kept when the VM is removed or rebuilt"
	}
	return h
}

// taskVars reads the vars of Taskfile.yml, and under "_cmd" the commands of
// its vm:create task.
// taskVars are the Taskfile's vars (and vm:create's commands, as _cmd),
// read and parsed once per Folder (a summary and the grants of an approval
// ask for them several times; no edit of a Folder changes the Taskfile).
// Each call gets its own copy.
func (f *Folder) taskVars() map[string]string {
	if f.vars == nil {
		raw, err := schema.ReadFile(filepath.Join(f.Dir, "Taskfile.yml"))
		if err != nil {
			return map[string]string{}
		}
		f.vars = taskVarsOf(raw)
	}
	return maps.Clone(f.vars)
}

// taskVarsOf is taskVars of the Taskfile raw.
func taskVarsOf(raw []byte) map[string]string {
	out := map[string]string{}
	var tf struct {
		Vars  map[string]any `yaml:"vars"`
		Tasks map[string]struct {
			Cmds []any `yaml:"cmds"`
		} `yaml:"tasks"`
	}
	if yaml.Unmarshal(raw, &tf) != nil {
		return out
	}
	for k, v := range tf.Vars {
		if str, ok := v.(string); ok {
			out[k] = str
		}
	}
	var cmds []string
	for _, c := range tf.Tasks["vm:create"].Cmds {
		if str, ok := c.(string); ok {
			cmds = append(cmds, str)
		}
	}
	out["_cmd"] = strings.Join(cmds, "\n")
	return out
}

func (f *Folder) agentPresets() []schema.Agent { return f.Agents }

func (f *Folder) secrets(problems *[]string) []SecretView {
	out := []SecretView{}
	data, ok := f.Current(SecretsFile)
	if !ok {
		return out
	}
	secs, _, probs := schema.LoadSecrets(SecretsFile, data)
	for _, p := range probs {
		if p.Severity == schema.SeverityError {
			*problems = append(*problems, p.String())
		}
	}
	set, from := f.EnvFileNames(), runner.SecretCommandsMissing(f.Dir, f.Getenv)
	for _, name := range secretOrder(data, secs) {
		sec, ok := secs[name]
		if !ok {
			out = append(out, SecretView{Name: name, Hosts: []string{}, Refused: true})
			continue
		}
		v := SecretView{Name: name, Hosts: append([]string{}, sec.Allow...), Headers: true}
		if sub := sec.Substitution; sub != nil {
			v.Headers = sub.Headers == nil || *sub.Headers
			v.Query = sub.Query != nil && *sub.Query
			v.Body = sub.Body != nil && *sub.Body
		}
		env := name
		if ref, ok := schema.EnvRef(sec.Value); ok {
			env = ref
		}
		missing, fromCmd := from[name]
		switch {
		case fromCmd:
			v.Set, v.From, v.CommandMissing = true, FromCommand, missing
		case f.Getenv(env) != "":
			v.Set, v.From = true, "environment"
		case set[env]:
			v.Set, v.From = true, SecretsEnvFile
		}
		out = append(out, v)
	}
	return out
}

// secretOrder lists the secrets in file order.
func secretOrder(data []byte, secs schema.Secrets) []string {
	var order []string
	if d, err := yamledit.Parse(data); err == nil {
		if root, err := d.Root(); err == nil {
			order = append(order, yamledit.Keys(root)...)
		}
	}
	for k := range secs {
		if !slices.Contains(order, k) {
			order = append(order, k)
		}
	}
	return order
}
