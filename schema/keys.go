package schema

import (
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Verdict is asb's judgement of one key (in one form) of sandbox.yaml or
// secrets.yaml: the outer folder is committed and cloned, so every key msb
// reads is input from someone else and gets one.
type Verdict int

// The verdicts.
const (
	// Shown: accepted, and asb boundary lists it.
	Shown Verdict = iota
	// Widening: it lets the VM reach more of the host; accepted only with
	// its consent comment beside it (then validate warns and boundary shows
	// it in red).
	Widening
	// Refused: validate stops vm:create ("not supported by asb: …").
	Refused
)

func (v Verdict) String() string {
	switch v {
	case Widening:
		return "boundary-widening"
	case Refused:
		return "refused"
	}
	return "shown"
}

// MarshalText writes the verdict's name (asb boundary --format json).
func (v Verdict) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// The consent comments: written beside a key (`# asb: allow-home`), they
// accept a boundary-widening form of it, in the file the team reviews.
const (
	// HostConsent allows a bind of a host folder outside the outer folder
	// and outside $HOME (HomeConsent is for those under $HOME).
	HostConsent = "asb: allow-host"
	// VolumeConsent allows a named volume of msb's store.
	VolumeConsent = "asb: allow-volume"
	// TLSConsent allows hosts the TLS proxy does not inspect.
	TLSConsent = "asb: allow-tls-bypass"
)

// KeyRule is one row of the key table: a key (a path such as
// "network.tls.bypass", "[]" for each list item) in one form, its verdict
// and why. Since is the msb version that introduced the key.
type KeyRule struct {
	File    string // SandboxFile or SecretsFile
	Key     string
	Form    string // "" for every form, else what Match accepts
	Verdict Verdict
	Consent string // of a Widening rule
	Why     string
	Since   string
	Match   func(v *yaml.Node) bool `json:"-"`
}

// msbBaseline is the msb version every key of the table is known from.
const msbBaseline = "0.7.2"

func isFalse(v *yaml.Node) bool {
	return v.Kind == yaml.ScalarNode && v.ShortTag() == "!!bool" && strings.EqualFold(v.Value, "false")
}
func isMap(v *yaml.Node) bool { return v.Kind == yaml.MappingNode }

// namedShort matches a short mount whose source is a volume name.
func namedShort(v *yaml.Node) bool {
	if v.Kind != yaml.ScalarNode {
		return false
	}
	src, _, ok := strings.Cut(v.Value, ":")
	return ok && src != "" && !shortIsPath(src)
}

func shortIsPath(src string) bool {
	return strings.HasPrefix(src, ".") || strings.HasPrefix(src, "/") || strings.HasPrefix(src, "~") || strings.Contains(src, "/")
}

func row(key, form string, v Verdict, consent, why string, match func(*yaml.Node) bool) KeyRule {
	return KeyRule{File: SandboxFile, Key: key, Form: form, Verdict: v, Consent: consent, Why: why, Since: msbBaseline, Match: match}
}

// KeyTable is every key msb 0.7.x reads in sandbox.yaml and secrets.yaml,
// each key (and form) with its verdict. The first row whose key and form
// match decides. docs/security.md shows the same table (a test
// keeps them together).
var KeyTable = []KeyRule{
	row("image", "object", Refused, "", "its disk, bind and snapshot forms boot a file or folder of the host as the root filesystem, which no mount rule judges", isMap),
	row("image", "string", Shown, "", "the image the VM boots; vm:create loads it from toolchain/ with --pull never", nil),
	row("pull_policy", "", Shown, "", "where the image comes from", nil),
	row("registry", "", Refused, "", "password_env hands msb a variable of the host environment, and asb pulls no image: vm:create loads it from toolchain/", nil),
	row("cpus", "", Shown, "", "a resource of the VM", nil),
	row("memory", "", Shown, "", "a resource of the VM, 256M to 1024G", nil),
	row("max_duration", "", Shown, "", "a limit of the VM", nil),
	row("idle_timeout", "", Shown, "", "a limit of the VM", nil),
	row("rlimits", "", Refused, "", "asb does not check the entries as msb does (resource names, soft above hard); set limits in the image", nil),
	row("workdir", "", Shown, "", "inside the VM only", nil),
	row("shell", "", Shown, "", "inside the VM only", nil),
	row("user", "", Shown, "", "inside the VM only", nil),
	row("hostname", "", Shown, "", "inside the VM only", nil),
	row("security", "", Shown, "", "inside the VM only", nil),
	row("entrypoint", "", Shown, "", "what the VM runs", nil),
	row("cmd", "", Shown, "", "what the VM runs", nil),
	row("env", "", Shown, "", "every value is visible in the VM; boundary lists them (secrets belong in secrets.yaml)", nil),
	row("labels", "", Shown, "", "msb's metadata of the VM", nil),
	row("init", "", Refused, "", "it replaces the guest's init with a command and environment of the file's choosing, which runs before the agent and outside asb's image", nil),
	row("mounts[]", "NAME:/GUEST", Widening, VolumeConsent, "a named volume lives in msb's store, outside the folder: it may be another project's or another clone's home", namedShort),
	row("mounts[]", "SOURCE:/GUEST", Shown, "", "a bind of a folder: inside the outer folder, or with # "+HomeConsent+" / # "+HostConsent+" beside it", nil),
	row("mounts[].bind", "", Shown, "", "a host folder: inside the outer folder, or with # "+HomeConsent+" (under $HOME) or # "+HostConsent+" (elsewhere) beside it; system folders never", nil),
	row("mounts[].named", "", Widening, VolumeConsent, "a named volume lives in msb's store, outside the folder: it may be another project's or another clone's home", nil),
	row("mounts[].tmpfs", "", Shown, "", "memory of the VM", nil),
	row("mounts[].stat_virtualization", "", Shown, "", "how the guest sees the owner and mode of a bind's files", nil),
	row("mounts[].host_permissions", "", Shown, "", "whether the guest's chmod and chown reach the host files of the bind", nil),
	row("mounts[].disk", "", Refused, "", "a disk image file of the host is attached as a block device; the mount policy judges folders, not images", nil),
	row("patch_files", "", Refused, "", "msb reads each file from the host at create; its copy_file and copy_dir patches copy host files into the VM past the mount policy", nil),
	row("patches", "", Refused, "", "copy_file and copy_dir copy host files into the VM past the mount policy; put files into the image (toolchain/) or workspace/", nil),
	row("network", "", Shown, "", "the egress policy; boundary shows it", nil),
	row("network.dns.nameservers", "", Refused, "", "a committed file would choose the server that answers, and sees, every name the VM looks up", nil),
	row("network.dns.rebind_protection", "false", Refused, "", "a name that resolves to a private address would reach the host and the LAN", isFalse),
	row("network.tls.verify_upstream", "false", Refused, "", "the proxy would accept any certificate upstream, so whoever sits in between receives the secrets", isFalse),
	row("network.tls.enabled", "false", Widening, TLSConsent, "without interception no secret is substituted and HTTPS is not inspected", isFalse),
	row("network.tls.bypass", "", Widening, TLSConsent, "traffic to these hosts passes the TLS proxy uninspected", nil),
	row("secrets", "", Refused, "", "asb keeps every binding in secrets.yaml, where validate checks names, values and hosts; an inline binding escapes those checks", nil),
	row("secret_violation_action", "", Shown, "", "what the proxy does when a secret goes to another host", nil),
	row("scripts", "", Refused, "", "named scripts are written into the VM from the committed file; put scripts into the image or workspace/", nil),
	row("ports", "", Shown, "", "host ports forwarded into the VM; boundary lists them", nil),
	{File: SecretsFile, Key: "NAME.value", Form: "\"${NAME}\"", Verdict: Shown, Why: "msb reads the value from the host variable of the binding's own name; any other form is refused", Since: msbBaseline},
	{File: SecretsFile, Key: "NAME.allow", Verdict: Shown, Why: "the hosts the value is sent to; boundary lists them", Since: msbBaseline},
	{File: SecretsFile, Key: "NAME.placeholder", Verdict: Shown, Why: "what the VM sees in place of the value", Since: msbBaseline},
	{File: SecretsFile, Key: "NAME.substitution", Verdict: Shown, Why: "where in a request the value is substituted; boundary lists it", Since: msbBaseline},
	{File: SecretsFile, Key: "NAME.passthrough", Verdict: Shown, Why: "hosts a placeholder passes to unchanged", Since: msbBaseline},
	{File: SecretsFile, Key: "NAME.violation_action", Verdict: Shown, Why: "what the proxy does when the value goes to another host", Since: msbBaseline},
	{File: SecretsFile, Key: "NAME.require_tls_identity", Verdict: Shown, Why: "whether the host must prove its identity", Since: msbBaseline},
}

// ExpandRefused is why `${…}` is refused anywhere in sandbox.yaml.
const ExpandRefused = "msb expands it from the host environment before parsing, which gets around every other rule"

// RuleFor returns the row of the key table for key (a path as KeyTable
// writes it) with value v, nil when the table has none.
func RuleFor(file, key string, v *yaml.Node) *KeyRule {
	for i := range KeyTable {
		r := &KeyTable[i]
		if r.File == file && r.Key == key && (r.Match == nil || (v != nil && r.Match(v))) {
			return r
		}
	}
	return nil
}

// KeyUse is one key of a file that the table has a row for.
type KeyUse struct {
	Field   string // e.g. "mounts[2].named"
	Rule    *KeyRule
	Node    *yaml.Node // the value
	Consent bool       // the rule's consent comment is beside it
}

// KeyUses walks sandbox.yaml's tree and returns each key the table judges
// Widening or Refused, or that holds `${` (Rule nil), in file order.
func KeyUses(root *yaml.Node) []KeyUse {
	var out []KeyUse
	walkKeys(root, "", "", nil, nil, &out)
	return out
}

// walkKeys visits n (the value of key k); anc are the keys and values
// above it, whose comments count when they are on k's line (a flow
// mapping such as `network: {tls: {bypass: [x]}} # asb: …`).
func walkKeys(n *yaml.Node, field, key string, k *yaml.Node, anc []*yaml.Node, out *[]KeyUse) {
	if n == nil {
		return
	}
	if key != "" {
		if r := RuleFor(SandboxFile, key, n); r != nil && r.Verdict != Shown {
			*out = append(*out, KeyUse{Field: field, Rule: r, Node: n, Consent: r.Consent != "" && hasComment(r.Consent, sameLine(n, append(anc, k, n))...)})
		}
	}
	switch n.Kind {
	case yaml.ScalarNode:
		if strings.Contains(n.Value, "${") {
			*out = append(*out, KeyUse{Field: field, Node: n})
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			walkKeys(c, field+"["+strconv.Itoa(i)+"]", key+"[]", nil, append(anc, k, n), out)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			kn, v := n.Content[i], n.Content[i+1]
			if strings.Contains(kn.Value, "${") {
				*out = append(*out, KeyUse{Field: joinField(field, kn.Value), Node: kn})
			}
			walkKeys(v, joinField(field, kn.Value), joinField(key, kn.Value), kn, append(anc, k, n), out)
		}
	}
}

// sameLine keeps the nodes on n's line.
func sameLine(n *yaml.Node, nodes []*yaml.Node) []*yaml.Node {
	var out []*yaml.Node
	for _, m := range nodes {
		if m != nil && m.Line == n.Line {
			out = append(out, m)
		}
	}
	return out
}

// hasComment reports whether consent is written beside the key or value.
func hasComment(consent string, nodes ...*yaml.Node) bool {
	for _, n := range nodes {
		if n != nil && (strings.Contains(n.LineComment, consent) || strings.Contains(n.HeadComment, consent)) {
			return true
		}
	}
	return false
}

// judgeKeys reports the Refused and Widening keys of sandbox.yaml and every
// `${…}`.
func (l *loader) judgeKeys(top *yaml.Node) {
	for _, u := range KeyUses(top) {
		switch {
		case u.Rule == nil:
			l.errf(u.Node, u.Field, "write the value itself; put credentials into secrets.yaml and secrets.env",
				"not supported by asb: ${…} in %s, because %s", u.Field, ExpandRefused)
		case u.Rule.Verdict == Refused:
			l.errf(u.Node, u.Field, "remove "+lastKey(u.Field), "not supported by asb: %s, because %s", describeUse(u), u.Rule.Why)
		case u.Consent:
			// CheckDir warns (checkConsents); the loader reports errors only.
		default:
			l.errf(u.Node, u.Field, "remove it, or, if you mean it, write the comment # "+u.Rule.Consent+" at the end of its line",
				"%s widens the boundary: %s", describeUse(u), u.Rule.Why)
		}
	}
}

func describeUse(u KeyUse) string {
	if u.Rule.Form != "" && u.Rule.Form != "string" {
		return u.Field + " (" + u.Rule.Form + ")"
	}
	return u.Field
}

func lastKey(field string) string {
	if i := strings.LastIndexAny(field, ".]"); i >= 0 && field[i] == '.' {
		return field[i+1:]
	}
	return field
}

// checkConsents warns of each boundary-widening key its consent allows.
func (c *checker) checkConsents() {
	for _, u := range KeyUses(c.sbRoot) {
		if u.Rule != nil && u.Rule.Verdict == Widening && u.Consent {
			c.at(SandboxFile, u.Node, SeverityWarning, u.Field, "make sure it is meant",
				"%s widens the boundary (allowed by # %s): %s", describeUse(u), u.Rule.Consent, u.Rule.Why)
		}
	}
}
