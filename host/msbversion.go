package host

import (
	"fmt"
	"strconv"
	"strings"
)

// MSBCaps is what one msb release does that an outer folder depends on:
// the one table every version-dependent part of asb asks (generation at
// create time, validate's key check, network check, doctor, the tasks).
type MSBCaps struct {
	Version string // as `msb --version` gives it, without "msb "
	// Row is the table's row that applies: the release itself, or the
	// newest row at or below it (a patch the table does not list).
	Row string
	// Newer is set when Version is newer than the newest row: asb assumes
	// that row's behaviour.
	Newer bool
	// Older is set below MinMSB: asb does not support it.
	Older bool

	// StrictDefault: strict hostname checking is on unless network.strict
	// is false; HTTPS allowed only by a hostname then needs TLS
	// interception or is blocked.
	StrictDefault bool
	Wait          bool // msb wait
	// Labels: msb create --label KEY=VALUE on sandboxes (msb inspect shows
	// them under config.labels; ls, stop and rm select by them). Volumes
	// and images carry none in any 0.7 release.
	Labels bool
	// DenyResponse: network.http.deny_response and deny_message exist.
	DenyResponse bool
	// ConfPathsFromFile: relative host paths of a config file resolve from
	// the file's folder (asb runs msb create from the outer folder, where
	// both rules agree).
	ConfPathsFromFile bool
	// SymlinkRootsFailEarly: a bind mount whose root is a symlink fails at
	// create time with a message.
	SymlinkRootsFailEarly bool
	DfPrune               bool // msb df, msb prune
	HTTPProxy             bool // msb create --proxy http://… (CONNECT)
	// HeaderFields: a secret's substitution.header_fields exists.
	HeaderFields bool
	DetachedJobs bool // msb exec -d, msb logs/wait --job
	PortRanges   bool // -p 8000-8002:80-82
	TrustScript  bool // msb-trust.sh in the guest
}

// MinMSB is the oldest msb asb supports; RecommendedMSB the oldest
// microsandbox itself recommends for 0.7.
const (
	MinMSB         = "0.7.2"
	RecommendedMSB = "0.7.3"
)

// OldMSBReason is microsandbox's own reason to leave 0.7.0–0.7.2, from its
// v0.7 migration guide (docs/migrations/v0.7.mdx).
const OldMSBReason = "microsandbox's v0.7 migration guide: \"Use v0.7.3 or a later compatible patch release. Earlier v0.7 releases have compatibility gaps addressed in v0.7.3.\""

// msbRows is the table, oldest first; each row lists only what changed,
// with the line of microsandbox's changelog (docs/changelog/v0.7.N.mdx)
// it comes from.
var msbRows = []struct {
	version string
	apply   func(*MSBCaps)
}{
	// v0.7.2: the release asb was first written and is tested against (the
	// real binary in CI); none of the features below.
	// v0.7.2 has sandbox labels ("--label <KEY[=VALUE]> Attach a label to
	// the sandbox", `msb ls --label`), checked against the real binary.
	// Every supported release keeps a running sandbox's lifecycle lock in
	// MSB_HOME (msbstate.go: seen held by 0.7.2, the same path in 0.7.8's
	// source), and starts a stopped sandbox itself on msb exec.
	{"0.7.2", func(c *MSBCaps) { c.Labels = true }},
	// v0.7.3: "HTTPS hostname rules need inspection. Strict hostname
	// checking is now on by default. HTTPS allowed only by hostname needs
	// TLS interception or is blocked. … Opt out with --net-strict=false or
	// network.strict: false"; "Wait in scripts. msb wait worker --timeout 5m".
	{"0.7.3", func(c *MSBCaps) { c.StrictDefault, c.Wait = true, true }},
	// v0.7.4: fixes only ("Secret scanning respects request locations", …).
	{"0.7.4", func(*MSBCaps) {}},
	// v0.7.5: "Readable network denials. Set http.deny_response: true to
	// answer default-denied HTTP and intercepted HTTPS requests with a 403
	// Forbidden instead of a dropped connection. deny_message customizes
	// the body"; "Denial responses are opt-in."
	{"0.7.5", func(c *MSBCaps) { c.DenyResponse = true }},
	// v0.7.6: "Host paths no longer move. … Paths in a sandbox configuration
	// file still resolve from that file's directory"; "Relative host paths
	// in global config.json and managed configuration now resolve from the
	// file's own directory, not your working directory."
	{"0.7.6", func(c *MSBCaps) { c.ConfPathsFromFile = true }},
	// v0.7.7: "Use an HTTP CONNECT proxy … msb create … --proxy
	// http://127.0.0.1:3128"; "msb df reports local storage usage; msb prune
	// --dry-run previews …"; "Symlinked bind-mount roots fail early with a
	// useful error."
	{"0.7.7", func(c *MSBCaps) { c.HTTPProxy, c.DfPrune, c.SymlinkRootsFailEarly = true, true, true }},
	// v0.7.8: "Send secrets only in intended headers. Restrict substitution
	// with headers=[authorization] on the CLI or substitution.header_fields
	// in configuration"; "Detached jobs"; "Equal-length ranges such as -p
	// 8000-8002:80-82"; "The optional msb-trust.sh helper configures
	// supported applications to trust the sandbox's TLS interception CA."
	{"0.7.8", func(c *MSBCaps) { c.HeaderFields, c.DetachedJobs, c.PortRanges, c.TrustScript = true, true, true, true }},
}

// Primitive is an msb command asb uses where the installed release has it
// and replaces with its own where it does not (asb ls, df, prune).
type Primitive string

// The primitives Has decides on.
const (
	PrimLabels Primitive = "labels"    // msb create --label: asb's VMs say whose they are
	PrimDf     Primitive = "msb df"    // msb df --format json: msb's own storage report
	PrimPrune  Primitive = "msb prune" // msb prune: unused runtime memory files
	PrimWait   Primitive = "msb wait"  // msb wait NAME
)

// Has is the one place that decides whether the release offers p: every
// caller asks it instead of comparing versions or columns itself.
func (c MSBCaps) Has(p Primitive) bool {
	if c.Older {
		return false
	}
	switch p {
	case PrimLabels:
		return c.Labels
	case PrimDf, PrimPrune:
		return c.DfPrune
	case PrimWait:
		return c.Wait
	}
	return false
}

// NewestKnownMSB is the newest release the table has a row for.
var NewestKnownMSB = msbRows[len(msbRows)-1].version

// CapsOf looks version ("0.7.8", "msb 0.7.8", "v0.7.8-rc1") up in the
// table. A version that cannot be read is an error; one outside 0.7.x is
// returned with Older or Newer set.
func CapsOf(version string) (MSBCaps, error) {
	v := strings.TrimPrefix(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(version), "msb")), "v")
	got, ok := parseVersion(v)
	if !ok {
		return MSBCaps{}, fmt.Errorf("msb --version said %q: not a version asb can read", strings.TrimSpace(version))
	}
	c := MSBCaps{Version: v}
	minV, _ := parseVersion(MinMSB)
	if compare(got, minV) < 0 {
		c.Older = true
		return c, nil
	}
	for _, r := range msbRows {
		rv, _ := parseVersion(r.version)
		if compare(got, rv) < 0 {
			break
		}
		c.Row = r.version
		r.apply(&c)
	}
	newest, _ := parseVersion(NewestKnownMSB)
	c.Newer = compare(got, newest) > 0
	return c, nil
}

// AtLeast reports whether the release is v or later (v as the table
// writes versions: "0.7.5").
func (c MSBCaps) AtLeast(v string) bool {
	got, ok := parseVersion(c.Version)
	want, ok2 := parseVersion(v)
	return ok && ok2 && compare(got, want) >= 0
}

// MustCaps is CapsOf for a version written in code (tests, defaults).
func MustCaps(version string) MSBCaps {
	c, err := CapsOf(version)
	if err != nil {
		panic(err)
	}
	return c
}

func parseVersion(v string) ([3]int, bool) {
	v, _, _ = strings.Cut(v, "-")
	v, _, _ = strings.Cut(v, "+")
	parts := strings.Split(v, ".")
	var out [3]int
	if len(parts) != 3 {
		return out, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return out, false
		}
		out[i] = n
	}
	return out, true
}

func compare(a, b [3]int) int {
	for i := range a {
		if a[i] != b[i] {
			return a[i] - b[i]
		}
	}
	return 0
}
