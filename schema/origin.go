package schema

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"
)

// The rule for a workspace origin: the repository git clones into
// workspace/, which the VM reads and writes. An origin in asb.yaml is
// input from whoever can push to the outer folder's repository, so it may
// name only a remote repository (https, ssh, git://): a local path or
// file:// would bring any repository of this machine (a password store, a
// private project) into the VM. A local path is used only when the user
// types it (asb init --workspace PATH). Neither door accepts what makes
// git run a program (a remote helper such as ext::) or read the URL as an
// option (a leading '-').

// OriginKind is how git reaches an origin.
type OriginKind int

const (
	// OriginRemote is https, ssh (ssh:// or scp-like [user@]host:path) or
	// git://, and http when the user typed it.
	OriginRemote OriginKind = iota
	// OriginLocal is a path on this machine, or a file:// URL.
	OriginLocal
)

// RemoteSchemes are the URL schemes an origin from a record may use.
var RemoteSchemes = []string{"https", "ssh", "git"}

// OriginError is an origin asb does not clone: what (the URL, its password
// hidden), where (Field), why, and the fix.
type OriginError struct {
	Field string // asb.yaml: workspace.url, or --workspace
	URL   string // shown; a password in it is replaced by xxxxx
	Why   string
	Fix   string
}

func (e *OriginError) Error() string {
	msg := e.Field + " " + fmt.Sprintf("%q", e.URL) + " " + e.Why
	if e.Fix != "" {
		msg += ": " + e.Fix
	}
	return msg
}

// OriginField is where a recorded origin lives, for messages.
const OriginField = RecordFile + ": workspace.url"

// CheckRecordedOrigin checks an origin read from asb.yaml: remote only.
func CheckRecordedOrigin(raw string) error {
	kind, err := checkOrigin(OriginField, raw, false)
	if err == nil && kind == OriginLocal {
		return &OriginError{Field: OriginField, URL: RedactOrigin(raw),
			Why: "is a local path or file://: from a record, which anyone who can push to this folder can change, asb clones only " + strings.Join(RemoteSchemes, ", ") + " URLs, never a repository of this machine into the VM's workspace/",
			Fix: "if it is yours, clone it yourself (git clone -- PATH workspace) or type it: asb init --workspace PATH"}
	}
	return err
}

// CheckRecordedBranch checks the branch asb.yaml records for the origin:
// empty (the remote's default) or a plain branch name, never an option.
func CheckRecordedBranch(b string) error {
	if b == "" {
		return nil
	}
	if strings.HasPrefix(b, "-") || strings.Contains(b, "..") || strings.Contains(b, "@{") ||
		strings.ContainsAny(b, " ~^:?*[\\") || strings.IndexFunc(b, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
		return &OriginError{Field: RecordFile + ": workspace.branch", URL: b,
			Why: "is not a branch name git accepts (no leading '-', spaces, control characters, .., ~^:?*[\\ or @{)",
			Fix: "restore asb.yaml from git, or clone the workspace yourself"}
	}
	return nil
}

// CheckTypedOrigin checks an origin the user typed (asb init --workspace):
// a local path and file:// are allowed too. It returns how git reaches it.
func CheckTypedOrigin(raw string) (OriginKind, error) {
	return checkOrigin("--workspace", raw, true)
}

// lazyRegexp compiles expr on first use: schema is linked by every
// command, and its start-up is paid by each (docs/init-allowlist.txt).
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

var (
	// git reads <transport>::<address> as "run git-remote-<transport>".
	remoteHelperRe = lazyRegexp(`^[A-Za-z0-9][A-Za-z0-9+.-]*::`)
	schemeRe       = lazyRegexp(`^([A-Za-z][A-Za-z0-9+.-]*)://`)
	// scp-like: [user@]host:path, with no '/' before the first ':'.
	scpRe = lazyRegexp(`^(?:([^@/:]*)@)?([^@/:]*):(.*)$`)
)

// checkOrigin classifies raw as git would, refusing what asb never clones.
func checkOrigin(field, raw string, typed bool) (OriginKind, error) {
	refuse := func(why, fix string) (OriginKind, error) {
		return 0, &OriginError{Field: field, URL: RedactOrigin(raw), Why: why, Fix: fix}
	}
	const fixRemote = "give an https://, ssh:// (or user@host:path) or git:// URL"
	switch {
	case raw == "":
		return refuse("is empty", fixRemote)
	case strings.IndexFunc(raw, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0:
		return refuse("holds a control character", fixRemote)
	case strings.HasPrefix(raw, "-"):
		return refuse("starts with '-', which git would read as an option", fixRemote)
	case remoteHelperRe().MatchString(raw):
		return refuse("names a git remote helper ("+raw[:strings.Index(raw, "::")+2]+"), which runs a program", fixRemote)
	}
	if m := schemeRe().FindStringSubmatch(raw); m != nil {
		return checkSchemeOrigin(raw, strings.ToLower(m[1]), typed, refuse)
	}
	if strings.Contains(raw, "::") {
		return refuse("holds '::', which git may read as a remote helper", fixRemote)
	}
	if m := scpRe().FindStringSubmatch(raw); m != nil && !strings.Contains(m[2], "/") {
		return checkHost(m[1], m[2], refuse)
	}
	return OriginLocal, nil
}

type refuseFunc func(why, fix string) (OriginKind, error)

func checkSchemeOrigin(raw, scheme string, typed bool, refuse refuseFunc) (OriginKind, error) {
	switch scheme {
	case "file":
		return OriginLocal, nil
	case "https", "ssh", "git", "git+ssh", "ssh+git":
	case "http":
		if !typed {
			return refuse("is plain http, which anyone on the way can change", "use its https:// URL")
		}
	default:
		return refuse(fmt.Sprintf("uses the %s transport: not supported by asb, which clones %s origins (another transport runs a program of its own)", scheme, strings.Join(RemoteSchemes, ", ")), "give an https://, ssh:// or git:// URL, or clone it yourself into workspace/")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return refuse("is not a valid URL", "check its spelling")
	}
	user := ""
	if u.User != nil {
		if _, has := u.User.Password(); has {
			return refuse("holds a password, which would be written to asb.yaml (committed) and workspace/.git/config", "drop it and let git's credential helper or SSH supply it")
		}
		user = u.User.Username()
	}
	return checkHost(user, u.Hostname(), refuse)
}

// checkHost refuses a host or user that ssh would read as an option, and
// a user name that is a token.
func checkHost(user, host string, refuse refuseFunc) (OriginKind, error) {
	switch {
	case host == "":
		return refuse("names no host", "give the repository's full URL")
	case strings.HasPrefix(host, "-") || strings.HasPrefix(user, "-"):
		return refuse("has a host or user starting with '-', which ssh would read as an option", "check its spelling")
	case LooksRandom(user):
		return refuse("has a user name that looks like a token, which would be written to asb.yaml (committed) and workspace/.git/config", "drop it and let git's credential helper supply it")
	}
	return OriginRemote, nil
}

// RedactOrigin is raw with a password or a token user name in it
// replaced, for messages.
func RedactOrigin(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.User != nil && schemeRe().MatchString(raw) {
		if _, has := u.User.Password(); has {
			return u.Redacted()
		}
		if LooksRandom(u.User.Username()) {
			u.User = url.User("xxxxx")
			return u.String()
		}
	}
	if m := scpRe().FindStringSubmatch(raw); m != nil && LooksRandom(m[1]) {
		return "xxxxx@" + raw[len(m[1])+1:]
	}
	return raw
}
