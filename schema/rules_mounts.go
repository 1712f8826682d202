package schema

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agents-sandbox/asb/internal/folderfs"
)

// The mount policy: which host folders a VM may see, and where. A mount
// must not hand the host over to the VM: not its system folders, not the
// container engine (its socket is root on the host), not the outer folder
// (secrets.env, and sandbox.yaml the VM could rewrite) nor its own folders
// (.git, .asb, .task, .asb-base), not the user's $HOME unless they say so.
// asb mount add and asb validate both apply it.

// HomeConsent is the comment that allows a mount of a folder under $HOME,
// written beside its host path in sandbox.yaml (asb mount add --allow-home
// writes it), so that the exception is in the file a team reviews.
const HomeConsent = "asb: allow-home"

// hostSystem are host folders a mount may be neither of nor under.
// All of /var is the host's: its state (/var/lib), logs, mail, caches and
// the engines' stores (/var/lib/docker, /var/lib/containers).
var hostSystem = []string{"/etc", "/proc", "/sys", "/dev", "/boot", "/root", "/run", "/var", "/bin", "/sbin",
	"/lib", "/lib32", "/lib64", "/libx32", "/usr", "/System", "/Library", "/private"}

// hostTops are host folders a mount may be under (with consent), but not
// of (all of /opt is the host's; /opt/data may be a user's).
var hostTops = []string{"/opt", "/srv", "/home", "/Users", "/mnt", "/media", "/Volumes", "/tmp"}

// engineSockets are the container engines' sockets: who can reach one is
// root on the host, so no mount may hold one (nor its folder, nor above).
var engineSockets = []string{"/var/run/docker.sock", "/run/docker.sock", "/run/podman/podman.sock",
	"/run/containerd/containerd.sock", "/var/run/crio/crio.sock", "/run/buildkit/buildkitd.sock"}

// guestSystem are guest paths the VM needs: a mount may be neither of nor
// under them.
var guestSystem = []string{"/etc", "/proc", "/sys", "/dev", "/usr", "/bin", "/lib", "/lib64", "/sbin", "/boot", "/run"}

// guestTops are guest paths a mount may be under but not of.
var guestTops = []string{"/var", "/tmp", "/root", "/home", "/home/dev", "/opt"}

// MountRules judge mounts for one outer folder.
type MountRules struct {
	Dir  string // the outer folder, absolute and resolved
	Home string // $HOME, resolved ("" unknown)
	// Getenv finds the per-user engine sockets ($XDG_RUNTIME_DIR).
	Getenv func(string) string
	// Own are the guest paths asb mounts itself: /workspace, /home/dev,
	// the agents' config folders.
	Own []string
}

// HostFolder judges the host side of a bind: host is absolute, cleaned and
// symlink-resolved. A folder inside the outer folder is the default; any
// other needs consent (the comment Consent(host) names beside it), and
// the host's own folders stay refused even with consent.
func (m MountRules) HostFolder(host string, consent bool) *RuleError {
	fix := "mount a folder that holds only what the agent needs, e.g. ./workspace or a data folder of its own"
	switch {
	case !utf8.ValidString(host):
		return &RuleError{Value: strings.ToValidUTF8(host, "\uFFFD"), Why: "is not valid UTF-8: sandbox.yaml (YAML) can only hold UTF-8 paths",
			Fix: "rename the folder to a UTF-8 name, or mount a folder above it"}
	case host == "/":
		return &RuleError{Value: host, Why: "is the host's whole filesystem", Fix: fix}
	case host == m.Dir:
		return &RuleError{Value: host, Why: "is the outer folder itself: the VM would see secrets.env and could rewrite sandbox.yaml", Fix: fix}
	case Within(m.Dir, host):
		return &RuleError{Value: host, Why: "holds the outer folder: the VM would see secrets.env and sandbox.yaml", Fix: fix}
	case m.Home != "" && Within(m.Home, host):
		return &RuleError{Value: host, Why: "holds your home folder $HOME", Fix: fix}
	}
	for _, sock := range m.sockets() {
		if Within(sock, host) {
			return &RuleError{Value: host, Why: "holds " + sock + ", a container engine's socket: whoever reaches it is root on the host", Fix: fix}
		}
	}
	if Within(host, m.Dir) {
		return ownFolder(m.Dir, host, fix)
	}
	for _, s := range hostSystem {
		if Within(host, s) {
			return &RuleError{Value: host, Why: "is a system folder of the host (" + s + "): the VM would get the host's own files", Fix: fix}
		}
	}
	for _, s := range hostTops {
		if host == s {
			return &RuleError{Value: host, Why: "is a whole system folder of the host", Fix: fix}
		}
	}
	if consent {
		return nil
	}
	if c := m.Consent(host); c == HomeConsent {
		return &RuleError{Value: host, Why: "is under your home folder $HOME, which holds your keys, tokens and history",
			Fix: "mount a folder inside the outer folder, or, if you mean it, add it with asb mount add --allow-home (it writes the comment # " + HomeConsent + ")"}
	}
	return &RuleError{Value: host, Why: "is outside the outer folder (symlinks followed), and nothing says the VM may see it",
		Fix: "mount a folder inside the outer folder, or, if you mean it, write the comment # " + HostConsent + " at the end of its line (asb mount add --allow-home writes it)"}
}

// ownWhy says, for each of the outer folder's own folders, what the VM
// could do on the host by writing it: the outer repository's .git and
// asb's (folderfs.OwnFolders).
var ownWhy = map[string]string{
	".git":            "git on the host runs its hooks and reads its config",
	folderfs.StateDir: "it holds this machine's state: the host repository, the home volume's name, the secrets' key",
	".task":           "go-task's checksums there decide whether the image is built again",
	BaseDir:           "asb update and sync merge against it",
}

// ownFolder refuses host (inside the outer folder dir) when it is one of
// the folder's own folders, or inside one; a session's checkout
// (.asb/sessions/NAME/workspace), the tree its VM writes, is not asb's
// state but the session's workspace/.
func ownFolder(dir, host, fix string) *RuleError {
	for _, own := range append([]string{".git"}, folderfs.OwnFolders...) {
		if Within(host, filepath.Join(dir, own)) && !sessionCheckout(dir, host) {
			return &RuleError{Value: host, Why: "is the outer folder's " + own + "/ or a folder in it: not supported by asb, because the VM would write it and " + ownWhy[own], Fix: fix}
		}
	}
	return nil
}

// sessionCheckout reports whether host is a session's checkout, or a
// folder in one.
func sessionCheckout(dir, host string) bool {
	rel, err := filepath.Rel(filepath.Join(dir, filepath.FromSlash(SessionsDir)), host)
	if err != nil {
		return false
	}
	name, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	return name != ".." && SessionName(name) == nil &&
		Within(host, filepath.Join(dir, filepath.FromSlash(SessionPathsOf(name).Workspace)))
}

// Consent is the comment that allows a bind of host (outside the outer
// folder): HomeConsent under $HOME, HostConsent elsewhere.
func (m MountRules) Consent(host string) string {
	if m.Home != "" && Within(host, m.Home) {
		return HomeConsent
	}
	return HostConsent
}

// sockets are the engine sockets of this host that exist, the user's own
// rootless ones included.
func (m MountRules) sockets() []string {
	list := engineSockets
	if m.Getenv != nil {
		if rt := m.Getenv("XDG_RUNTIME_DIR"); rt != "" {
			list = append(list, filepath.Join(rt, "podman", "podman.sock"), filepath.Join(rt, "docker.sock"))
		}
	}
	if m.Home != "" {
		list = append(list, filepath.Join(m.Home, ".docker", "run", "docker.sock"))
	}
	var out []string
	for _, s := range list {
		if fi, err := os.Lstat(s); err == nil && fi.Mode()&fs.ModeSocket != 0 {
			out = append(out, resolvePath(s))
		}
	}
	return out
}

// HostKind judges what is at a bind's host path: it must be a folder.
func HostKind(host string) *RuleError {
	fi, err := os.Stat(host)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &RuleError{Value: host, Why: "does not exist (msb would fail to start the VM)", Fix: "create the folder first, or fix the path"}
	case err != nil:
		return &RuleError{Value: host, Why: "cannot be read: " + err.Error(), Fix: "fix its permissions"}
	case !fi.IsDir():
		return &RuleError{Value: host, Why: "is not a folder; asb mounts folders", Fix: "mount the folder that holds it (read-only if the agent must not change it)"}
	}
	return nil
}

// BindDotDot judges a bind's host path as written: msb 0.7.2 starts no VM
// with a .. in it, in either form, from a config anywhere (the VM's agent
// cannot mount the share: "mount …: Invalid argument (os error 22)"; seen
// in the nested guest, docs/boot.md). clean is the same folder, written
// without it.
func BindDotDot(written, clean string) *RuleError {
	if !HoldsDotDot(written) {
		return nil
	}
	return &RuleError{Value: written, Why: "holds .., with which msb 0.7.2 starts no VM (\"mount …: Invalid argument\")",
		Fix: "write the same folder without ..: " + clean}
}

// HoldsDotDot reports whether path p, as written, has a .. part: what
// msb 0.7.2 starts no VM with in a bind (BindDotDot; the stand-in msb
// fails such a start as msb does).
func HoldsDotDot(p string) bool {
	return slices.Contains(strings.Split(filepath.ToSlash(p), "/"), "..")
}

// BindLink judges a bind's host path as written (made absolute, nothing
// followed): msb does not follow a link on it. With msb 0.7.2 the VM then
// fails to start, "mount …: Too many levels of symbolic links (os error
// 40)", for a link in the last place and for one further up inside the
// outer folder alike (the real-boot test, docs/boot.md). The outer
// folder's own path (dir) is not judged: asb and msb run in it; for a
// path outside it every part is, since asb cannot tell which msb follows.
func BindLink(dir, written string) *RuleError {
	start := "/"
	if Within(written, dir) {
		start = dir
	}
	rel, err := filepath.Rel(start, written)
	if err != nil || rel == "." {
		return nil
	}
	p := start
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		if err != nil {
			return nil // the existence check speaks for it
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			target := resolvePath(written)
			return &RuleError{Value: written, Why: "goes through a link (" + p + "), which msb does not follow: the VM fails to start (\"Too many levels of symbolic links\")",
				Fix: "write the folder it leads to, " + target + ", in its place"}
		}
	}
	return nil
}

// GuestPath judges the guest side of a mount: absolute, and none of the
// paths the VM needs or asb mounts itself (own, when the mount is not
// asb's own mount of that path).
func (m MountRules) GuestPath(guest string, ownMount bool) *RuleError {
	fix := "mount it somewhere of its own, e.g. /data"
	if !strings.HasPrefix(guest, "/") {
		return &RuleError{Value: guest, Why: "is not an absolute path in the VM", Fix: fix}
	}
	g := path.Clean(guest)
	if g == "/" {
		return &RuleError{Value: guest, Why: "is the VM's root", Fix: fix}
	}
	for _, s := range guestSystem {
		// An agent preset's config target may be a system layer the agent
		// reads (/etc/codex); AgentTarget is the presets' rule.
		if IsUnderGuest(g, s) && !(ownMount && g != s && AgentTarget(g) == nil) {
			return &RuleError{Value: guest, Why: "is " + s + ", which the VM needs for itself", Fix: fix}
		}
	}
	for _, s := range guestTops {
		if g == s {
			return &RuleError{Value: guest, Why: "is " + s + ", which the VM needs for itself", Fix: fix}
		}
	}
	if ownMount {
		return nil
	}
	for _, own := range m.Own {
		if IsUnderGuest(own, g) {
			return &RuleError{Value: guest, Why: "would cover " + own + ", which asb mounts itself", Fix: fix}
		}
		if own != "/home/dev" && IsUnderGuest(g, own) {
			return &RuleError{Value: guest, Why: "is inside " + own + ", which asb mounts itself", Fix: fix}
		}
	}
	return nil
}

// AgentTarget judges where an agent preset mounts its config folder: under
// /home/dev (the agent reads it there), or /etc/NAME, one folder for the
// system layer of an agent that must write into its home folder (Codex's
// /etc/codex, Gemini CLI's /etc/gemini-cli, Claude Code's /etc/claude-code).
func AgentTarget(p string) *RuleError {
	fix := "use /home/dev/PATH or /etc/NAME"
	switch {
	case p != path.Clean(p) || !strings.HasPrefix(p, "/"):
		return &RuleError{Value: p, Why: "is not an absolute, clean path", Fix: fix}
	case strings.HasPrefix(p, HomeMount+"/"):
		return nil
	case strings.HasPrefix(p, "/etc/") && !strings.Contains(p[len("/etc/"):], "/") && ValidProjectName(p[len("/etc/"):]):
		return nil
	}
	return &RuleError{Value: p, Why: "is not a place for an agent's config", Fix: fix}
}

// IsUnderGuest reports whether guest path p is q or inside it.
func IsUnderGuest(p, q string) bool {
	p, q = path.Clean(p), path.Clean(q)
	return p == q || q == "/" || strings.HasPrefix(p, q+"/")
}

// Within reports whether the host path p is base or below it.
func Within(p, base string) bool {
	rel, err := filepath.Rel(base, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// ResolvePath resolves the symlinks of the longest existing prefix of p (an
// absolute, clean path) and appends the rest.
func ResolvePath(p string) string { return resolvePath(p) }
