package outer

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agents-sandbox/asb/schema"
)

// Grants is what an outer folder would grant the agent, in a form kept
// with each approval (approvals.go) so that a later folder can be compared
// with the approved one without its old files: the network and its hosts,
// each secret and where it may go, the mounts, ports, images, agents,
// limits and the workspace's origin. It never holds a secret value.
type Grants struct {
	Network string        `json:"network"` // allow, public, open, none (schema.PolicyModeOf)
	Allow   []string      `json:"allow,omitempty"`
	Deny    []string      `json:"deny,omitempty"`
	Secrets []SecretGrant `json:"secrets,omitempty"`
	Mounts  []MountGrant  `json:"mounts,omitempty"`
	Ports   []string      `json:"ports,omitempty"`
	Images  []string      `json:"images,omitempty"`
	Agents  []string      `json:"agents,omitempty"`
	// Limits are the VM's sizes and times by name (cpus, memory, and
	// schema.Limits' names); "" is unset.
	Limits map[string]string `json:"limits,omitempty"`
	Origin string            `json:"origin,omitempty"`
	// Settings are the other keys of sandbox.yaml that widen the boundary
	// or that asb refuses, as field: value.
	Settings []string `json:"settings,omitempty"`
}

// SecretGrant is one secret: its hosts, and where in a request it goes.
type SecretGrant struct {
	Name  string   `json:"name"`
	Hosts []string `json:"hosts"`
	In    string   `json:"in"` // headers, query, body
}

// MountGrant is one mount: what of the host the guest path shows.
type MountGrant struct {
	Guest  string `json:"guest"`
	Source string `json:"source"` // ./workspace, /abs/host/path, volume NAME, memory
	Access string `json:"access"`
	// Outside: a host folder outside the outer folder.
	Outside bool `json:"outside,omitempty"`
}

// GrantsOf summarises the folder f (its current files).
func GrantsOf(f *Folder) *Grants {
	b := f.Summarize()
	g := &Grants{Limits: map[string]string{}}
	data, _ := f.Current(SandboxFile)
	sb, _, _ := schema.LoadSandbox(SandboxFile, data)
	if sb == nil {
		sb = &schema.Sandbox{}
	}
	g.Network = schema.PolicyModeOf(sb.Network)
	g.Allow, g.Deny = b.Network.Allow, b.Network.Deny
	for _, s := range b.Secrets {
		g.Secrets = append(g.Secrets, SecretGrant{Name: s.Name, Hosts: s.Hosts, In: s.Where()})
	}
	for _, m := range b.Mounts {
		g.Mounts = append(g.Mounts, mountGrant(m))
	}
	for _, p := range b.Ports {
		g.Ports = append(g.Ports, fmt.Sprintf("%s:%d→%d/%s", p.Bind, p.Host, p.Guest, p.Protocol))
	}
	vars := f.taskVars()
	if sb.Image != "" && sb.Image != vars["IMAGE"] {
		g.Images = append(g.Images, sb.Image)
	}
	if df, ok := f.Current(schema.DockerfilePath); ok {
		for _, r := range schema.BaseImages(string(df)) {
			g.Images = append(g.Images, r.Ref)
		}
	}
	g.Agents = f.agentsOf(b.Mounts, vars["AGENT"])
	if sb.CPUs > 0 {
		g.Limits["cpus"] = fmt.Sprint(sb.CPUs)
	}
	g.Limits["memory"] = sb.Memory
	for _, l := range b.Limits {
		g.Limits[l.Name] = l.Value
	}
	if rec, err := schema.ReadRecord(f.Dir); err == nil {
		url := schema.RedactOrigin(rec.Workspace.URL)
		if url == "" && rec.Workspace.Local != "" {
			url = "local " + rec.Workspace.Local + ", not shared:" // no URL a teammate could clone
		}
		g.Origin = strings.TrimSpace(url + " " + rec.Workspace.Branch)
	}
	for _, s := range b.Settings {
		if s.Verdict != schema.Shown.String() {
			g.Settings = append(g.Settings, s.Field+": "+s.Value)
		}
	}
	return g
}

func mountGrant(m MountView) MountGrant {
	mg := MountGrant{Guest: m.Guest, Source: m.Source, Access: m.Access, Outside: m.Outside || m.UnderHome}
	switch {
	case m.Kind == "named":
		mg.Source = "volume " + m.Source
	case m.Kind == "tmpfs":
		mg.Source = "memory"
	case mg.Outside:
		mg.Source = m.Host
	}
	return mg
}

// agentsOf names the agents the folder runs: each preset whose config
// folder is mounted at its place, and the Taskfile's AGENT.
func (f *Folder) agentsOf(mounts []MountView, agent string) []string {
	var out []string
	for _, m := range mounts {
		for _, a := range f.Agents {
			if m.Role == "agent-config" && m.Guest == a.MountTarget && !slices.Contains(out, a.Name) {
				out = append(out, a.Name)
			}
		}
	}
	if agent != "" && !slices.Contains(out, agent) {
		out = append(out, agent)
	}
	slices.Sort(out)
	return out
}

// limitOrder is the order limits are shown and compared in.
func limitOrder() []string {
	out := []string{"cpus", "memory"}
	for _, l := range schema.Limits {
		out = append(out, l.Name)
	}
	return out
}

// Change is one difference between an approved folder and this one.
type Change struct {
	Widens bool   // what the agent gets is more than what was approved
	What   string // one line
}

// modeRank orders network modes from the least to the most reached.
var modeRank = map[string]int{"none": 0, "allow": 1, "public": 2, "open": 3}

// Compare lists what widened and what narrowed from old (approved) to g.
func (g *Grants) Compare(old *Grants) []Change {
	var out []Change
	add := func(widens bool, format string, args ...any) {
		out = append(out, Change{Widens: widens, What: fmt.Sprintf(format, args...)})
	}
	if g.Network != old.Network {
		add(modeRank[g.Network] > modeRank[old.Network], "network: %s → %s (%s)", modeName(old.Network), modeName(g.Network), modeWhat(g.Network))
	}
	if g.Network == old.Network {
		listChanges(add, "network allow", old.Allow, g.Allow, true) // a list only an allow list has
	}
	listChanges(add, "network deny", old.Deny, g.Deny, false)
	out = append(out, secretChanges(old.Secrets, g.Secrets)...)
	out = append(out, mountChanges(old.Mounts, g.Mounts)...)
	listChanges(add, "port", old.Ports, g.Ports, true)
	if !slices.Equal(old.Images, g.Images) {
		// Another image is another program: a change to judge, not a narrowing.
		add(true, "images: %s → %s", orNone(strings.Join(old.Images, ", ")), orNone(strings.Join(g.Images, ", ")))
	}
	listChanges(add, "agent", old.Agents, g.Agents, true)
	for _, name := range limitOrder() {
		a, b := old.Limits[name], g.Limits[name]
		if a != b {
			add(larger(b, a), "limit %s: %s → %s", name, orNone(a), orNone(b))
		}
	}
	if g.Origin != old.Origin {
		add(true, "workspace origin: %s → %s", orNone(old.Origin), orNone(g.Origin))
	}
	listChanges(add, "setting", old.Settings, g.Settings, true)
	return out
}

type addFunc func(widens bool, format string, args ...any)

// listChanges adds an entry of b not in a as a widening (when more is
// wider) and one of a not in b as a narrowing.
func listChanges(add addFunc, what string, a, b []string, moreIsWider bool) {
	for _, x := range b {
		if !slices.Contains(a, x) {
			add(moreIsWider, "%s: + %s", what, x)
		}
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			add(!moreIsWider, "%s: - %s", what, x)
		}
	}
}

func secretChanges(a, b []SecretGrant) []Change {
	var out []Change
	find := func(l []SecretGrant, n string) *SecretGrant {
		for i := range l {
			if l[i].Name == n {
				return &l[i]
			}
		}
		return nil
	}
	for _, s := range b {
		o := find(a, s.Name)
		switch {
		case o == nil:
			out = append(out, Change{true, fmt.Sprintf("secret %s: new, sent to %s (in %s)", s.Name, strings.Join(s.Hosts, ", "), s.In)})
			continue
		case s.In != o.In:
			out = append(out, Change{len(s.In) > len(o.In), fmt.Sprintf("secret %s: sent in %s, was in %s", s.Name, s.In, o.In)})
		}
		listChanges(func(w bool, f string, args ...any) {
			out = append(out, Change{w, fmt.Sprintf(f, args...)})
		}, "secret "+s.Name+" host", o.Hosts, s.Hosts, true)
	}
	for _, s := range a {
		if find(b, s.Name) == nil {
			out = append(out, Change{false, fmt.Sprintf("secret %s: gone", s.Name)})
		}
	}
	return out
}

func mountChanges(a, b []MountGrant) []Change {
	var out []Change
	for _, m := range b {
		i := slices.IndexFunc(a, func(o MountGrant) bool { return o.Guest == m.Guest })
		switch {
		case i < 0:
			out = append(out, Change{true, fmt.Sprintf("mount %s: new, %s (%s)", m.Guest, m.Source, m.Access)})
		case a[i].Source != m.Source:
			out = append(out, Change{true, fmt.Sprintf("mount %s: %s → %s (%s)", m.Guest, a[i].Source, m.Source, m.Access)})
		case a[i].Access != m.Access:
			out = append(out, Change{m.Access == "rw", fmt.Sprintf("mount %s: %s → %s", m.Guest, a[i].Access, m.Access)})
		}
	}
	for _, m := range a {
		if !slices.ContainsFunc(b, func(o MountGrant) bool { return o.Guest == m.Guest }) {
			out = append(out, Change{false, fmt.Sprintf("mount %s: gone (was %s)", m.Guest, m.Source)})
		}
	}
	return out
}

// larger reports whether the limit b is more than a ("" is unset: the
// most, or msb's default for a size).
func larger(b, a string) bool {
	switch {
	case b == "":
		return true
	case a == "":
		return false
	}
	bs, errB := schema.ParseSize(b)
	as, errA := schema.ParseSize(a)
	if errA == nil && errB == nil {
		return bs > as
	}
	if schema.Duration(a) == nil && schema.Duration(b) == nil {
		return schema.DurationSeconds(b) > schema.DurationSeconds(a)
	}
	var x, y int
	if _, err := fmt.Sscan(b, &x); err == nil {
		if _, err := fmt.Sscan(a, &y); err == nil {
			return x > y
		}
	}
	return true // cannot tell: a change to judge
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func modeName(m string) string {
	if m == "allow" {
		return "allow list"
	}
	return m
}

func modeWhat(m string) string {
	switch m {
	case "allow":
		return "only the allowed hosts"
	case "public":
		return "the whole public internet"
	case "open":
		return "everything, your host's and LAN's private addresses included"
	case "none":
		return "no network"
	}
	return m
}
