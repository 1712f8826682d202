package schema

import (
	"strings"
)

// LocalBaseRepo is the repository a base image asb builds from Debian's
// packages is named under: a name no registry serves, so a build never
// tries to pull it.
const LocalBaseRepo = "localhost/debian"

// IsLocalBase reports whether ref names a base asb builds rather than pulls.
func IsLocalBase(ref string) bool { return strings.HasPrefix(ref, LocalBaseRepo+":") }

var debianSuiteRe = lazyRegexp(`^[a-z]{3,20}$`)

// LocalDebianBase judges a base image reference `asb task image:base` is to
// build: localhost/debian:SUITE or localhost/debian:SUITE-slim, where SUITE
// is a Debian suite or codename (trixie, bookworm, stable, …). It returns
// the suite.
func LocalDebianBase(ref string) (suite string, re *RuleError) {
	tag, _ := strings.CutPrefix(ref, LocalBaseRepo+":")
	if !IsLocalBase(ref) {
		return "", &RuleError{Value: ref, Why: "is not a base image asb builds (only " + LocalBaseRepo + ":SUITE[-slim] is; another name is pulled from its registry)",
			Fix: "set ARG BASE_IMAGE=" + LocalBaseRepo + ":trixie-slim in toolchain/Dockerfile (asb init --base-image " + LocalBaseRepo + ":trixie-slim), or pull " + ref + " from its registry"}
	}
	suite = strings.TrimSuffix(tag, "-slim")
	if !debianSuiteRe().MatchString(suite) {
		return "", &RuleError{Value: ref, Why: "does not name a Debian suite after " + LocalBaseRepo + ":",
			Fix: "use a codename such as " + LocalBaseRepo + ":trixie-slim or " + LocalBaseRepo + ":bookworm"}
	}
	return suite, nil
}
