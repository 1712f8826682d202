package schema

// NetworkBalanced is the allow list plus BalancedHosts.
const NetworkBalanced = "balanced"

// BalancedHosts are the common development hosts `asb init --network
// balanced` adds to the allow list, each written out in sandbox.yaml so the
// team sees and reviews every entry: the package registries of the usual
// languages and the git host. Exact names only (no wildcard): each is a host
// a package manager or git talks to.
var BalancedHosts = []HostGroup{
	{"npm", []string{"registry.npmjs.org"}},
	{"Python (pip)", []string{"pypi.org", "files.pythonhosted.org"}},
	{"Go modules", []string{"proxy.golang.org", "sum.golang.org"}},
	{"Rust (cargo)", []string{"index.crates.io", "static.crates.io"}},
	{"GitHub (git, releases)", []string{"github.com", "api.github.com", "codeload.github.com", "objects.githubusercontent.com"}},
}

// HostGroup is a named part of a profile's hosts.
type HostGroup struct {
	Name  string
	Hosts []string
}
