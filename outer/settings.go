package outer

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agents-sandbox/asb/schema"
)

// SettingView is one more key of sandbox.yaml that reaches msb, beyond the
// mounts, network allow/deny, ports and secrets.yaml the other sections
// show: env values, DNS and TLS settings, patches, scripts, inline secrets,
// init, registry, and the VM's resources. Each carries the key table's
// verdict (schema.KeyTable).
type SettingView struct {
	Field   string `json:"field"` // e.g. "env.A", "network.tls.bypass"
	Value   string `json:"value"` // compact YAML; names only under secrets
	Verdict string `json:"verdict"`
	// Consent: a boundary-widening key carries its consent comment.
	Consent bool   `json:"consent,omitempty"`
	Why     string `json:"why,omitempty"`
	// Expands: the value holds ${…}, which msb fills from the host
	// environment (refused).
	Expands bool `json:"expands,omitempty"`
}

// shownElsewhere are the keys the other sections show.
var shownElsewhere = map[string]bool{"mounts": true, "ports": true, "network.policy": true,
	"network.allow": true, "network.deny": true, "network.ports": true}

// settings lists every key of root (sandbox.yaml's top mapping) that
// reaches msb and no other section shows.
func settings(root *yaml.Node) []SettingView {
	out := []SettingView{}
	if root == nil || root.Kind != yaml.MappingNode {
		return out
	}
	judged := map[string]schema.KeyUse{}
	for _, u := range schema.KeyUses(root) {
		judged[u.Field] = u
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch {
		case k.Value == "network" && v.Kind == yaml.MappingNode:
			for j := 0; j+1 < len(v.Content); j += 2 {
				f := "network." + v.Content[j].Value
				if !shownElsewhere[f] {
					out = appendSetting(out, f, v.Content[j+1], judged)
				}
			}
		case k.Value == "env" && v.Kind == yaml.MappingNode:
			for j := 0; j+1 < len(v.Content); j += 2 {
				out = appendSetting(out, "env."+v.Content[j].Value, v.Content[j+1], judged)
			}
		case !shownElsewhere[k.Value] && k.Value != "network":
			out = appendSetting(out, k.Value, v, judged)
		}
	}
	// ${…} and refused forms inside the sections shown elsewhere.
	for _, u := range schema.KeyUses(root) {
		top, _, _ := strings.Cut(u.Field, ".")
		top, _, _ = strings.Cut(top, "[")
		if shownElsewhere[top] || shownElsewhere[fieldKey(u.Field)] {
			out = appendSetting(out, u.Field, u.Node, judged)
		}
	}
	return out
}

// fieldKey is field without list indexes, two levels deep.
func fieldKey(field string) string {
	parts := strings.SplitN(field, ".", 3)
	for i := range parts {
		parts[i], _, _ = strings.Cut(parts[i], "[")
	}
	if len(parts) > 2 {
		parts = parts[:2]
	}
	return strings.Join(parts, ".")
}

// appendSetting adds field with its verdict: the strictest of the key
// table's judgement of it and of anything below it.
func appendSetting(out []SettingView, field string, v *yaml.Node, judged map[string]schema.KeyUse) []SettingView {
	s := SettingView{Field: field, Value: compact(field, v), Verdict: schema.Shown.String()}
	if r := schema.RuleFor(schema.SandboxFile, fieldKey(field), v); r != nil {
		s.Why = r.Why
	}
	worst := schema.Shown
	keys := make([]string, 0, len(judged))
	for f := range judged {
		keys = append(keys, f)
	}
	sort.Strings(keys)
	for _, f := range keys {
		u := judged[f]
		if f != field && !strings.HasPrefix(f, field+".") && !strings.HasPrefix(f, field+"[") {
			continue
		}
		verdict := schema.Refused // ${…}
		if u.Rule != nil {
			verdict = u.Rule.Verdict
		}
		s.Expands = s.Expands || u.Rule == nil
		if verdict > worst || (verdict == worst && u.Rule != nil) {
			worst = verdict
			s.Consent = u.Consent
			if u.Rule != nil {
				s.Why = u.Rule.Why
			} else {
				s.Why = "${…}: " + schema.ExpandRefused
			}
		}
	}
	s.Verdict = worst.String()
	for i, o := range out {
		if o.Field == field {
			out[i] = s
			return out
		}
	}
	return append(out, s)
}

// compact renders v on one line. Under secrets only the names show: an
// inline binding may hold the credential itself.
func compact(field string, v *yaml.Node) string {
	if field == "secrets" || strings.HasPrefix(field, "secrets.") {
		if v.Kind != yaml.MappingNode {
			return "(not shown: it may hold a credential)"
		}
		var names []string
		for i := 0; i+1 < len(v.Content); i += 2 {
			names = append(names, v.Content[i].Value)
		}
		return strings.Join(names, ", ") + " (values not shown)"
	}
	c := *v
	flow(&c)
	b, err := yaml.Marshal(&c)
	if err != nil {
		return "(unreadable)"
	}
	s := strings.TrimSpace(string(b))
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}

func flow(n *yaml.Node) {
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		n.Style = yaml.FlowStyle
	}
	n.HeadComment, n.LineComment, n.FootComment = "", "", ""
	for i, c := range n.Content {
		cc := *c
		flow(&cc)
		n.Content[i] = &cc
	}
}

// Reaches reports whether anything beyond folders inside the outer folder,
// the home volume and the agent's config reaches the VM from the host: a
// bind outside the folder, a named or disk volume, or a setting that is
// not simply shown.
func (b *Boundary) Reaches() bool {
	for _, m := range b.Mounts {
		if m.UnderHome {
			return true
		}
	}
	return b.reachesOther()
}

// reachesOther is Reaches but for binds under $HOME (PrintMounts words
// those itself).
func (b *Boundary) reachesOther() bool {
	for _, m := range b.Mounts {
		if m.Outside || m.Refused != "" || m.Kind == "named" || m.Kind == "disk" {
			return true
		}
	}
	for _, s := range b.Settings {
		if s.Verdict != schema.Shown.String() {
			return true
		}
	}
	return false
}

// PrintSettings writes the other settings, refused and widening ones in red.
func (b *Boundary) PrintSettings(w io.Writer) {
	if len(b.Settings) == 0 {
		fmt.Fprintln(w, "Other settings: none.")
		return
	}
	fmt.Fprintln(w, "Other settings that reach msb (key, value, verdict):")
	for _, s := range b.Settings {
		note := ""
		switch {
		case s.Verdict == schema.Refused.String():
			note = "REFUSED: " + s.Why + " (asb validate stops vm:create)"
		case s.Verdict == schema.Widening.String() && s.Consent:
			note = "WIDENS THE BOUNDARY (allowed by its consent comment): " + s.Why
		case s.Verdict == schema.Widening.String():
			note = "WIDENS THE BOUNDARY, no consent comment: " + s.Why + " (asb validate stops vm:create)"
		}
		fmt.Fprintf(w, "  %s: %s", s.Field, s.Value)
		alarm(w, note)
		fmt.Fprintln(w)
	}
}
