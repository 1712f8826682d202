package outer

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agents-sandbox/asb/internal/yamledit"
	"github.com/agents-sandbox/asb/schema"
)

// networkKeys is the order of network's own keys, for new ones: msb's.
var networkKeys = schema.NetworkKeys

// NetEdit says what an edit of network did, host by host.
type NetEdit struct {
	Added    []string // put in network.allow (or network.deny for Deny)
	Removed  []string // taken out of network.allow (or network.deny for Allow)
	Already  []string // nothing to do: already reachable (Allow) or denied (Deny)
	Policy   string   // the policy as NetworkOf names it, before the edit
	Note     string   // what the policy means for the hosts, when it matters
	Refusal  string   // set when the edit cannot be made; nothing was changed
	Changed  bool
	Coverage map[string]string // host → the allow entry covering it
}

// netState reads the network key of root.
type netState struct {
	node   *yaml.Node // the value, nil when absent
	policy string     // NetworkOf's name
	allow  []string
	deny   []string
}

func readNet(root *yaml.Node) netState {
	st := netState{node: yamledit.Get(root, "network")}
	switch {
	case st.node == nil:
		st.policy = "default"
	case st.node.Kind == yaml.ScalarNode:
		st.policy = st.node.Value
	case st.node.Kind == yaml.MappingNode:
		pol := ""
		if p := yamledit.Get(st.node, "policy"); p != nil {
			pol = p.Value
		}
		st.allow = yamledit.Strings(yamledit.Get(st.node, "allow"))
		st.deny = yamledit.Strings(yamledit.Get(st.node, "deny"))
		st.policy = NetworkOf(&schema.Network{Policy: pol, Allow: st.allow, Deny: st.deny}).Policy
	default:
		st.policy = "unknown"
	}
	return st
}

func covering(allow []string, host string) string {
	for _, a := range allow {
		if schema.EntryCovers(a, host) {
			return a
		}
	}
	return ""
}

// AllowHosts lets the VM reach hosts: in the allow-list form each host not
// already covered is appended to network.allow; under any policy a host is
// taken out of network.deny. A policy that already reaches every host
// (public, open, no network key) is left as it is, and so is none: the
// note says what that means.
func AllowHosts(root *yaml.Node, hosts []string) NetEdit {
	st := readNet(root)
	e := NetEdit{Policy: st.policy, Coverage: map[string]string{}}
	if st.node != nil && st.node.Kind == yaml.MappingNode {
		deny := yamledit.Get(st.node, "deny")
		for _, h := range hosts {
			if yamledit.Remove(deny, func(n *yaml.Node) bool { return strings.EqualFold(n.Value, h) }) > 0 {
				e.Removed, e.Changed = append(e.Removed, h), true
			}
		}
		if deny != nil && len(deny.Content) == 0 {
			yamledit.Delete(st.node, "deny")
		}
	}
	switch st.policy {
	case "allow-list":
		allow := yamledit.Get(st.node, "allow")
		for _, h := range hosts {
			if c := covering(yamledit.Strings(allow), h); c != "" {
				e.Already, e.Coverage[h] = append(e.Already, h), c
				continue
			}
			yamledit.Append(allow, newHost(allow, h))
			e.Added, e.Changed = append(e.Added, h), true
		}
	case "none":
		e.Refusal = "network is none: the VM reaches no host at all. To let it reach only some hosts, replace `network: none` in sandbox.yaml with `network: {allow: [" + strings.Join(hosts, ", ") + "]}`"
		e.Already = nil
	case "public", "open", "default":
		for _, h := range hosts {
			if !slices.Contains(e.Removed, h) {
				e.Already = append(e.Already, h)
			}
		}
		e.Note = fmt.Sprintf("egress is %s, so %s reachable without an allow entry; sandbox.yaml's network policy was not changed (to allow only some hosts, write network: {allow: [HOST, …]})",
			policyWords(st.policy), hostsAre(hosts))
	default:
		e.Refusal = fmt.Sprintf("network policy %q is not one asb can edit; fix sandbox.yaml by hand (asb validate explains)", st.policy)
	}
	return e
}

// DenyHosts keeps the VM from reaching hosts. In the allow-list form a host
// is taken out of network.allow; it is also added to network.deny when an
// allow entry such as *.example.com still covers it. Under public or open
// (or no network key) the host is added to network.deny (msb checks deny
// rules first), turning a string policy into the object form. Under none
// every host is denied already.
func DenyHosts(root *yaml.Node, hosts []string) NetEdit {
	st := readNet(root)
	e := NetEdit{Policy: st.policy, Coverage: map[string]string{}}
	switch st.policy {
	case "allow-list":
		denyFromAllowList(st, hosts, &e)
	case "public", "open", "default":
		denyUnderPublic(root, st, hosts, &e)
	case "none":
		e.Already = append(e.Already, hosts...)
		e.Note = "network is none: the VM reaches no host at all"
	default:
		e.Refusal = fmt.Sprintf("network policy %q is not one asb can edit; fix sandbox.yaml by hand (asb validate explains)", st.policy)
	}
	return e
}

// denyFromAllowList takes hosts out of network.allow, and adds to
// network.deny those another allow entry (*.example.com) still covers.
func denyFromAllowList(st netState, hosts []string, e *NetEdit) {
	allow := yamledit.Get(st.node, "allow")
	left := slices.DeleteFunc(slices.Clone(st.allow), func(a string) bool {
		return slices.ContainsFunc(hosts, func(h string) bool { return strings.EqualFold(a, h) })
	})
	if len(left) == 0 {
		e.Refusal = "that would empty network.allow: " + schema.EmptyAllowList + "; to block every host write `network: none` in sandbox.yaml"
		return
	}
	var toDeny []string
	for _, h := range hosts {
		if yamledit.Remove(allow, func(n *yaml.Node) bool { return strings.EqualFold(n.Value, h) }) > 0 {
			e.Removed, e.Changed = append(e.Removed, h), true
		}
		switch c := covering(left, h); {
		case c != "" && !containsFold(st.deny, h):
			e.Coverage[h] = c
			toDeny = append(toDeny, h)
		case c == "" && !slices.Contains(e.Removed, h):
			e.Already = append(e.Already, h)
		}
	}
	e.Added = appendDeny(st.node, toDeny)
	e.Changed = e.Changed || len(e.Added) > 0
}

// denyUnderPublic adds hosts to network.deny, turning a string policy into
// the object form {policy: public, deny: [HOST]}.
func denyUnderPublic(root *yaml.Node, st netState, hosts []string, e *NetEdit) {
	var toDeny []string
	for _, h := range hosts {
		if containsFold(st.deny, h) {
			e.Already = append(e.Already, h)
		} else {
			toDeny = append(toDeny, h)
		}
	}
	if len(toDeny) == 0 {
		return
	}
	nw := st.node
	if nw == nil || nw.Kind != yaml.MappingNode {
		pol := "public"
		if nw != nil {
			pol = nw.Value
		}
		m := yamledit.Map()
		yamledit.Set(m, "policy", yamledit.String(pol), networkKeys)
		k := yamledit.Set(root, "network", m, schema.SandboxKeys)
		if nw == nil {
			yamledit.SpaceBefore(k)
		}
		nw = m
	}
	e.Added, e.Changed = appendDeny(nw, toDeny), true
}

func appendDeny(nw *yaml.Node, hosts []string) []string {
	if len(hosts) == 0 {
		return nil
	}
	deny := yamledit.Get(nw, "deny")
	if deny == nil || deny.Kind != yaml.SequenceNode {
		deny = yamledit.Seq()
		yamledit.Set(nw, "deny", deny, networkKeys)
	}
	for _, h := range hosts {
		yamledit.Append(deny, newHost(deny, h))
	}
	return hosts
}

// newHost is a host entry for seq: in the style of its entries, or quoted
// like the files asb init writes.
func newHost(seq *yaml.Node, h string) *yaml.Node {
	if len(yamledit.Items(seq)) > 0 {
		return yamledit.String(h)
	}
	return yamledit.Quoted(h)
}

func containsFold(list []string, s string) bool {
	return slices.ContainsFunc(list, func(x string) bool { return strings.EqualFold(x, s) })
}

func policyWords(p string) string {
	switch p {
	case "public":
		return "public (the whole public internet)"
	case "open":
		return "open (everything)"
	case "default":
		return "msb's default (no network key: the whole public internet)"
	}
	return p
}

func hostsAre(hosts []string) string {
	if len(hosts) == 1 {
		return hosts[0] + " is"
	}
	return strings.Join(hosts, ", ") + " are"
}

// CheckHosts applies schema.Host to host arguments (what names them in
// the message: "host", "--allow"); none at all is refused too.
func CheckHosts(what string, hosts []string) error {
	if len(hosts) == 0 {
		return &schema.FieldError{Field: what, Why: "no host was given", Fix: "name at least one, e.g. api.github.com"}
	}
	for _, h := range hosts {
		if re := schema.Host(h); re != nil {
			return schema.RuleField(what, re)
		}
	}
	return nil
}

// SplitHosts splits comma-separated host arguments and drops duplicates.
func SplitHosts(args []string) []string {
	var out []string
	for _, a := range args {
		for h := range strings.SplitSeq(a, ",") {
			if h = strings.TrimSpace(h); h != "" && !containsFold(out, h) {
				out = append(out, h)
			}
		}
	}
	return out
}

// editNetwork applies edit (AllowHosts or DenyHosts) to sandbox.yaml's
// network and records the new content; a refusal changes nothing.
func (f *Folder) editNetwork(hosts []string, edit func(*yaml.Node, []string) NetEdit) (NetEdit, error) {
	doc, root, err := f.Doc(SandboxFile)
	if err != nil {
		return NetEdit{}, err
	}
	e := edit(root, hosts)
	if e.Changed && e.Refusal == "" {
		if err := f.Save(SandboxFile, doc); err != nil {
			return e, err
		}
	}
	return e, nil
}

// Allow lets the VM reach hosts (see AllowHosts) and commits the edit.
func (f *Folder) Allow(hosts []string) (NetEdit, []schema.Problem, error) {
	return f.commitNetwork(hosts, AllowHosts)
}

// Deny keeps the VM from reaching hosts (see DenyHosts) and commits the
// edit. Denying a host an agent needs for its provider is done, with a
// warning: the agent will fail to reach it.
func (f *Folder) Deny(hosts []string) (NetEdit, []schema.Problem, error) {
	e, warns, err := f.commitNetwork(hosts, DenyHosts)
	if err == nil {
		warns = append(warns, f.agentHostWarnings(hosts)...)
	}
	return e, warns, err
}

// agentHostWarnings warns for each of hosts an agent preset needs.
func (f *Folder) agentHostWarnings(hosts []string) []schema.Problem {
	var out []schema.Problem
	for _, a := range f.Agents {
		for _, need := range a.Hosts {
			if slices.ContainsFunc(hosts, func(h string) bool { return schema.EntryCovers(h, need) }) {
				out = append(out, schema.Problem{File: SandboxFile, Severity: schema.SeverityWarning, Field: "network",
					Msg: fmt.Sprintf("%s is the host %s talks to for its provider: with it denied, %s cannot work", need, a.Name, a.Name),
					Fix: "asb network allow " + need + " undoes it"})
			}
		}
	}
	return out
}

func (f *Folder) commitNetwork(hosts []string, edit func(*yaml.Node, []string) NetEdit) (NetEdit, []schema.Problem, error) {
	if err := CheckHosts("host", hosts); err != nil {
		return NetEdit{}, nil, err
	}
	e, err := f.editNetwork(hosts, edit)
	if err != nil {
		return e, nil, err
	}
	if e.Refusal != "" {
		return e, nil, fmt.Errorf("nothing was changed: %s", e.Refusal)
	}
	warns, err := f.Commit()
	return e, warns, err
}
