package host

import (
	"fmt"
	"strings"

	"github.com/agents-sandbox/asb/schema"
)

// MSBCaps is what one msb release does that an outer folder depends on,
// read from the one table of releases (schema.MSBReleases) that every
// version-dependent part of asb asks (generation at create time,
// validate's key check, network check, doctor, the tasks).
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

// MinMSB is the oldest msb asb supports (the first row of the table,
// schema.MSBReleases); RecommendedMSB the oldest microsandbox itself
// recommends for 0.7.
var MinMSB = schema.MinMSB

// RecommendedMSB is the oldest release microsandbox recommends (OldMSBReason).
const RecommendedMSB = "0.7.3"

// OldMSBReason is microsandbox's own reason to leave 0.7.0–0.7.2, from its
// v0.7 migration guide (docs/migrations/v0.7.mdx).
const OldMSBReason = "microsandbox's v0.7 migration guide: \"Use v0.7.3 or a later compatible patch release. Earlier v0.7 releases have compatibility gaps addressed in v0.7.3.\""

// set turns on the field of one feature of the table.
func (c *MSBCaps) set(f schema.MSBFeature) {
	switch f {
	case schema.FeatLabels:
		c.Labels = true
	case schema.FeatStrictDefault:
		c.StrictDefault = true
	case schema.FeatWait:
		c.Wait = true
	case schema.FeatDenyResponse:
		c.DenyResponse = true
	case schema.FeatConfPathsFromFile:
		c.ConfPathsFromFile = true
	case schema.FeatHTTPProxy:
		c.HTTPProxy = true
	case schema.FeatDfPrune:
		c.DfPrune = true
	case schema.FeatSymlinkRootsFailEarly:
		c.SymlinkRootsFailEarly = true
	case schema.FeatHeaderFields:
		c.HeaderFields = true
	case schema.FeatDetachedJobs:
		c.DetachedJobs = true
	case schema.FeatPortRanges:
		c.PortRanges = true
	case schema.FeatTrustScript:
		c.TrustScript = true
	}
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
var NewestKnownMSB = schema.NewestKnownMSB

// CapsOf looks version ("0.7.8", "msb 0.7.8", "v0.7.8-rc1") up in the
// table. A version that cannot be read is an error; one outside 0.7.x is
// returned with Older or Newer set.
func CapsOf(version string) (MSBCaps, error) {
	v := strings.TrimPrefix(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(version), "msb")), "v")
	got, ok := schema.ParseMSBVersion(v)
	if !ok {
		return MSBCaps{}, fmt.Errorf("msb --version said %q: not a version asb can read", strings.TrimSpace(version))
	}
	c := MSBCaps{Version: v}
	minV, _ := schema.ParseMSBVersion(MinMSB)
	if schema.CompareMSB(got, minV) < 0 {
		c.Older = true
		return c, nil
	}
	for _, r := range schema.MSBReleases {
		rv, _ := schema.ParseMSBVersion(r.Version)
		if schema.CompareMSB(got, rv) < 0 {
			break
		}
		c.Row = r.Version
		for _, f := range r.Features {
			c.set(f)
		}
	}
	newest, _ := schema.ParseMSBVersion(NewestKnownMSB)
	c.Newer = schema.CompareMSB(got, newest) > 0
	return c, nil
}

// AtLeast reports whether the release is v or later (v as the table
// writes versions: "0.7.5").
func (c MSBCaps) AtLeast(v string) bool { return schema.MSBAtLeast(c.Version, v) }

// MustCaps is CapsOf for a version written in code (tests, defaults).
func MustCaps(version string) MSBCaps {
	c, err := CapsOf(version)
	if err != nil {
		panic(err)
	}
	return c
}
