package schema

import (
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// MSBReleases is the one table of msb releases asb knows: what each is the
// first to do that an outer folder depends on (Features: host.CapsOf turns
// them into host.MSBCaps), and the config keys it is the first to read
// (Keys: validate, the stand-in msb and asb msb-conf use them). Oldest
// first; each row cites microsandbox's changelog (docs/changelog/v0.7.N.mdx).
// The first row is the oldest release asb supports.
var MSBReleases = []MSBRelease{
	// v0.7.2: the release asb was first written and is tested against (the
	// real binary in CI). It has sandbox labels ("--label <KEY[=VALUE]>
	// Attach a label to the sandbox", `msb ls --label`), checked against the
	// real binary. Every supported release keeps a running sandbox's
	// lifecycle lock in MSB_HOME (host/msbstate.go: seen held by 0.7.2, the
	// same path in 0.7.8's source), and starts a stopped sandbox itself on
	// msb exec. Its msb stop --timeout N fails at the budget and kills
	// nothing ("Graceful completion budget in seconds; timeout fails
	// without killing", its help and 0.7.7's source; 0.6's killed then):
	// runner.MSB.Stop relies on it.
	{Version: "0.7.2", Features: []MSBFeature{FeatLabels}},
	// v0.7.3: "HTTPS hostname rules need inspection. Strict hostname
	// checking is now on by default. HTTPS allowed only by hostname needs
	// TLS interception or is blocked. … Opt out with --net-strict=false or
	// network.strict: false"; "Wait in scripts. msb wait worker --timeout 5m".
	{Version: "0.7.3", Features: []MSBFeature{FeatStrictDefault, FeatWait}},
	// v0.7.4: fixes only ("Secret scanning respects request locations", …).
	{Version: "0.7.4"},
	// v0.7.5: "Readable network denials. Set http.deny_response: true to
	// answer default-denied HTTP and intercepted HTTPS requests with a 403
	// Forbidden instead of a dropped connection. deny_message customizes
	// the body"; "Denial responses are opt-in."
	{Version: "0.7.5", Features: []MSBFeature{FeatDenyResponse}, Keys: []VersionedKey{{
		File: SandboxFile, Path: "network.http",
		Rejection: "data did not match any variant of untagged enum NetworkInput",
		WrittenBy: "vm:create adds network.http.deny_response (a readable 403 that tells the agent to ask for asb network allow HOST) for an msb that reads it",
	}}},
	// v0.7.6: "Host paths no longer move. … Paths in a sandbox configuration
	// file still resolve from that file's directory"; "Relative host paths
	// in global config.json and managed configuration now resolve from the
	// file's own directory, not your working directory."
	{Version: "0.7.6", Features: []MSBFeature{FeatConfPathsFromFile}},
	// v0.7.7: "Use an HTTP CONNECT proxy … msb create … --proxy
	// http://127.0.0.1:3128"; "msb df reports local storage usage; msb prune
	// --dry-run previews …"; "Symlinked bind-mount roots fail early with a
	// useful error."
	{Version: "0.7.7", Features: []MSBFeature{FeatHTTPProxy, FeatDfPrune, FeatSymlinkRootsFailEarly}},
	// v0.7.8: "Send secrets only in intended headers. Restrict substitution
	// with headers=[authorization] on the CLI or substitution.header_fields
	// in configuration"; "Detached jobs"; "Equal-length ranges such as -p
	// 8000-8002:80-82"; "The optional msb-trust.sh helper configures
	// supported applications to trust the sandbox's TLS interception CA."
	{Version: "0.7.8", Features: []MSBFeature{FeatHeaderFields, FeatDetachedJobs, FeatPortRanges, FeatTrustScript}, Keys: []VersionedKey{{
		File: SecretsFile, Path: "*.substitution.header_fields",
		Rejection: "unknown field `header_fields`, expected one of `headers`, `query`, `body`",
		WrittenBy: "vm:create narrows each preset's key to the headers it is sent in (key_headers in the agent's agent.yaml) for an msb that reads header_fields",
	}}},
}

// MSBRelease is one row of MSBReleases.
type MSBRelease struct {
	Version  string
	Features []MSBFeature
	Keys     []VersionedKey
}

// MSBFeature is something a release does that asb depends on.
type MSBFeature string

// The features of the table (host.MSBCaps has a field for each).
const (
	FeatLabels                MSBFeature = "labels"        // msb create --label KEY=VALUE
	FeatStrictDefault         MSBFeature = "strict"        // strict hostname checking is on unless network.strict is false
	FeatWait                  MSBFeature = "wait"          // msb wait
	FeatDenyResponse          MSBFeature = "deny-response" // network.http.deny_response, deny_message
	FeatConfPathsFromFile     MSBFeature = "paths-from-file"
	FeatHTTPProxy             MSBFeature = "http-proxy" // msb create --proxy
	FeatDfPrune               MSBFeature = "df-prune"   // msb df, msb prune
	FeatSymlinkRootsFailEarly MSBFeature = "symlink-roots"
	FeatHeaderFields          MSBFeature = "header-fields" // a secret's substitution.header_fields
	FeatDetachedJobs          MSBFeature = "detached-jobs"
	FeatPortRanges            MSBFeature = "port-ranges"
	FeatTrustScript           MSBFeature = "trust-script"
)

// MinMSB is the oldest release asb supports: the table's first row.
var MinMSB = MSBReleases[0].Version

// NewestKnownMSB is the newest release the table has a row for.
var NewestKnownMSB = MSBReleases[len(MSBReleases)-1].Version

// VersionedKeys are the keys of the table's rows, each with its release.
var VersionedKeys = versionedKeys()

func versionedKeys() []VersionedKey {
	var out []VersionedKey
	for _, r := range MSBReleases {
		for _, k := range r.Keys {
			k.Since = r.Version
			out = append(out, k)
		}
	}
	return out
}

// ParseMSBVersion reads "0.7.8" (also "v0.7.8", "0.7.8-rc.1") as three
// numbers.
func ParseMSBVersion(v string) ([3]int, bool) {
	v = strings.TrimPrefix(v, "v")
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

// CompareMSB orders two versions as ParseMSBVersion reads them: negative
// when a is older than b.
func CompareMSB(a, b [3]int) int {
	for i := range a {
		if a[i] != b[i] {
			return a[i] - b[i]
		}
	}
	return 0
}

// MSBAtLeast reports whether version is v or later; false when either
// cannot be read.
func MSBAtLeast(version, v string) bool {
	got, ok := ParseMSBVersion(version)
	want, ok2 := ParseMSBVersion(v)
	return ok && ok2 && CompareMSB(got, want) >= 0
}

// versionedKey reports a key of the table met at path (a key msb reads
// only from its release on) with the releases named: the one that reads
// it, the one installed, and the upgrade or the asb feature that writes
// it at create time. The committed file never holds one (a teammate's
// older msb would reject it), so it is an error whatever msb is here.
func (l *loader) versionedKey(n *yaml.Node, path string) bool {
	for _, k := range VersionedKeys {
		if !k.Matches(l.file, path) {
			continue
		}
		switch {
		case l.msb == "":
			l.errf(n, path, "remove it: "+k.WrittenBy+" (asb doctor says which msb is installed)",
				"%s is read by msb %s and later; an older msb rejects it (%q)", path, k.Since, k.Rejection)
		case !MSBAtLeast(l.msb, k.Since):
			l.errf(n, path, "upgrade msb to "+k.Since+" or later (asb doctor says how), and keep the key out of this committed file, which a teammate's older msb would read: "+k.WrittenBy,
				"%s is read by msb %s and later; the msb installed here is %s, which rejects it (%q)", path, k.Since, l.msb, k.Rejection)
		default:
			l.errf(n, path, "remove it: "+k.WrittenBy,
				"not supported by asb in a committed file: %s is read by msb %s and later (installed here: %s), but a teammate's msb %s–%s rejects it (%q)",
				path, k.Since, l.msb, MinMSB, previousRelease(k.Since), k.Rejection)
		}
		return true
	}
	return false
}

// previousRelease is the table's row before v (v itself when it is the
// first).
func previousRelease(v string) string {
	prev := v
	for _, r := range MSBReleases {
		if r.Version == v {
			return prev
		}
		prev = r.Version
	}
	return prev
}
