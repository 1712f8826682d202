package schema

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	taskerrors "github.com/go-task/task/v3/errors"
	"github.com/go-task/task/v3/taskfile/ast"
	"go.yaml.in/yaml/v3"

	"github.com/agents-sandbox/asb/templates"
)

// The files of an outer folder that CheckDir reads.
const (
	SandboxFile    = "sandbox.yaml"
	SecretsFile    = "secrets.yaml"
	SecretsEnvFile = "secrets.env"
	TaskfileFile   = "Taskfile.yml"
	GitignoreFile  = ".gitignore"
	WorkspaceMount = "/workspace"
)

// CheckOptions tune CheckDir.
type CheckOptions struct {
	// Overrides maps a file (path relative to the outer folder, e.g.
	// "sandbox.yaml") to the content to check instead of what is on disk:
	// the boundary commands check an edit before they write it.
	Overrides map[string][]byte
	// Tracked reports whether rel is tracked by git; nil runs git in the folder.
	Tracked func(rel string) (bool, error)
	// Getenv looks up the host environment; nil means os.Getenv. Values are
	// only tested for being set, never echoed.
	Getenv func(string) string
	// Context bounds the git commands CheckDir runs; nil means Background.
	Context context.Context
}

// CheckDir checks the whole outer folder dir: the syntax and types of
// sandbox.yaml and secrets.yaml as msb reads them, the boundary (mounts,
// network, secrets), secrets.env's mode and git status, and Taskfile.yml as
// go-task reads it. Problems are sorted by file and line.
func CheckDir(dir string, opts CheckOptions) []Problem {
	c := newChecker(dir, opts)
	c.run()
	SortProblems(c.probs)
	return c.probs
}

type checker struct {
	dir   string // resolved absolute outer folder
	home  string // resolved $HOME, "" when unknown
	opts  CheckOptions
	ctx   context.Context
	probs []Problem

	sb      *Sandbox
	sbL     *loader
	sbRoot  *yaml.Node
	sec     Secrets
	secL    *loader
	secRoot *yaml.Node
	envFile map[string]bool // names given a non-empty value in secrets.env
}

func newChecker(dir string, opts CheckOptions) *checker {
	c := &checker{opts: opts, ctx: opts.Context}
	if c.ctx == nil {
		c.ctx = context.Background()
	}
	if c.opts.Getenv == nil {
		c.opts.Getenv = os.Getenv
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = filepath.Clean(dir)
	}
	c.dir = resolvePath(abs)
	if h := c.opts.Getenv("HOME"); h != "" && filepath.IsAbs(h) {
		c.home = resolvePath(filepath.Clean(h))
	} else if h, err := os.UserHomeDir(); err == nil {
		c.home = resolvePath(h)
	}
	return c
}

func (c *checker) add(p Problem) { c.probs = append(c.probs, p) }

func (c *checker) at(file string, n *yaml.Node, sev Severity, field, fix, format string, args ...any) {
	p := Problem{File: file, Severity: sev, Field: field, Fix: fix, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		p.Line, p.Col = n.Line, n.Column
	}
	for _, l := range []*loader{c.sbL, c.secL} {
		if l != nil && l.file == file && l.lines > 0 && p.Line > l.lines {
			p.Line, p.Col = l.lines, 0
		}
	}
	c.add(p)
}

// read returns the content of rel: the override, else the file on disk.
func (c *checker) read(rel string) ([]byte, bool, error) {
	if b, ok := c.opts.Overrides[rel]; ok {
		return b, true, nil
	}
	b, err := os.ReadFile(filepath.Join(c.dir, filepath.FromSlash(rel)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return b, true, nil
}

func (c *checker) run() {
	data, ok, err := c.read(SandboxFile)
	switch {
	case err != nil:
		c.add(Problem{File: SandboxFile, Severity: SeverityError, Msg: "cannot read the file: " + errText(err), Fix: "make it readable"})
	case !ok:
		c.add(Problem{File: SandboxFile, Severity: SeverityError, Msg: "the outer folder has no sandbox.yaml",
			Fix: "run asb validate in the outer folder, or asb init --agent AGENT to create one"})
	default:
		c.sbL = newLoader(SandboxFile)
		c.sb, c.sbRoot = c.sbL.sandbox(data)
		c.probs = append(c.probs, c.sbL.probs...)
	}
	if data, ok, err := c.read(SecretsFile); err != nil {
		c.add(Problem{File: SecretsFile, Severity: SeverityError, Msg: "cannot read the file: " + errText(err), Fix: "make it readable"})
	} else if ok {
		c.secL = newLoader(SecretsFile)
		c.sec, c.secRoot = c.secL.secrets(data)
		c.probs = append(c.probs, c.secL.probs...)
	}
	c.checkSecretsEnv()
	if c.sb != nil {
		c.checkMounts()
		c.checkNetwork()
	}
	if c.sec != nil {
		c.checkSecrets()
	}
	c.checkTaskfile()
}

func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// --- paths -----------------------------------------------------------------

// resolvePath resolves the symlinks of the longest existing prefix of p (an
// absolute, clean path) and appends the rest.
func resolvePath(p string) string {
	rest := ""
	for cur := p; ; cur = filepath.Dir(cur) {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		if filepath.Dir(cur) == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
	}
}

// within reports whether p is base or below it.
func within(p, base string) bool {
	rel, err := filepath.Rel(base, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func (c *checker) hostPath(p string) string {
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		if c.home == "" {
			return ""
		}
		p = filepath.Join(c.home, strings.TrimPrefix(p, "~"))
	case !filepath.IsAbs(p):
		p = filepath.Join(c.dir, p)
	}
	return resolvePath(filepath.Clean(p))
}

func (c *checker) rel(p string) string {
	if r, err := filepath.Rel(c.dir, p); err == nil && !strings.HasPrefix(r, "..") {
		return "./" + filepath.ToSlash(r)
	}
	return p
}

// secretFileIn finds a file named secrets.env or secrets.yaml at or below p.
// It looks at most limit entries deep, skipping .git and node_modules.
func secretFileIn(p string) string {
	fi, err := os.Stat(p)
	if err != nil {
		return ""
	}
	isSecret := func(name string) bool { return name == SecretsEnvFile || name == SecretsFile }
	if !fi.IsDir() {
		if isSecret(filepath.Base(p)) {
			return p
		}
		return ""
	}
	const limit = 50000
	seen, found := 0, ""
	_ = filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil //nolint:nilerr // unreadable entries cannot leak either
		}
		if seen++; seen > limit {
			return filepath.SkipAll
		}
		if d.IsDir() && q != p && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && isSecret(d.Name()) {
			found = q
			return filepath.SkipAll
		}
		return nil
	})
	return found
}

// --- mounts ----------------------------------------------------------------

func (c *checker) mountNode(i int, key string) *yaml.Node {
	f := fmt.Sprintf("mounts[%d]", i)
	if n := c.sbL.at[f+"."+key]; n != nil {
		return n
	}
	return c.sbL.at[f]
}

func (c *checker) checkMounts() {
	agents := loadAgents()
	workspace := -1
	for i, m := range c.sb.Mounts {
		i := c.sbL.mountIndex[i]
		f := fmt.Sprintf("mounts[%d]", i)
		if path.Clean(m.Target) == WorkspaceMount {
			workspace = i
			if m.Readonly {
				n := c.mountNode(i, "readonly")
				c.at(SandboxFile, n, SeverityError, f, "drop readonly (or :ro): the agent works in /workspace",
					"/workspace is mounted read-only; the agent cannot change the project")
			}
		}
		if m.Bind == "" {
			continue
		}
		h := c.hostPath(m.Bind)
		n := c.mountNode(i, "bind")
		fix := "mount a folder that holds only the project, e.g. ./workspace"
		switch {
		case h == "":
			c.at(SandboxFile, n, SeverityError, f, "use a path relative to the outer folder", "mount %q uses ~ but $HOME is unknown", m.Bind)
		case h == "/":
			c.at(SandboxFile, n, SeverityError, f, fix, "mount %q exposes the host's whole filesystem / to the VM", m.Bind)
		case h == c.dir:
			c.at(SandboxFile, n, SeverityError, f, fix,
				"mount %q is the outer folder itself: the VM would see secrets.env and could rewrite sandbox.yaml", m.Bind)
		case within(c.dir, h):
			c.at(SandboxFile, n, SeverityError, f, fix,
				"mount %q is an ancestor of the outer folder (%s): the VM would see secrets.env and sandbox.yaml", m.Bind, h)
		case c.home != "" && within(c.home, h):
			c.at(SandboxFile, n, SeverityError, f, fix, "mount %q exposes your home folder $HOME (%s) to the VM", m.Bind, h)
		default:
			if s := secretFileIn(h); s != "" {
				c.at(SandboxFile, n, SeverityError, f, "move the secrets file out of the mounted folder, or mount a folder without it",
					"mount %q contains %s: the VM could read the credentials", m.Bind, c.rel(s))
				continue
			}
			if m.Readonly {
				continue
			}
			for _, a := range agents {
				cfg := resolvePath(filepath.Join(c.dir, filepath.FromSlash(a.ConfigDir)))
				if within(cfg, h) {
					c.at(SandboxFile, c.mountNode(i, "bind"), SeverityError, f,
						"add readonly: true (or :ro): the agent must not rewrite its own settings",
						"mount %q makes %s's config folder %s/ writable in the VM", m.Bind, a.Name, a.ConfigDir)
					break
				}
			}
		}
	}
	// A writable mount over an agent's config target, whatever its source.
	for i, m := range c.sb.Mounts {
		i := c.sbL.mountIndex[i]
		if m.Readonly || m.Target == "" {
			continue
		}
		for _, a := range agents {
			if path.Clean(m.Target) != a.MountTarget {
				continue
			}
			if m.Bind != "" && within(resolvePath(filepath.Join(c.dir, filepath.FromSlash(a.ConfigDir))), c.hostPath(m.Bind)) {
				continue // reported above
			}
			c.at(SandboxFile, c.mountNode(i, "target"), SeverityError, fmt.Sprintf("mounts[%d]", i),
				"add readonly: true (or :ro)", "%s is %s's config folder in the VM and is mounted writable", a.MountTarget, a.Name)
		}
	}
	if n, ok := c.sbL.at["mounts"]; workspace < 0 && (!ok || len(n.Content) == len(c.sb.Mounts)) {
		n := c.sbL.at["mounts"]
		if n == nil {
			n = c.sbRoot
		}
		c.at(SandboxFile, n, SeverityError, "mounts", "add a mount: - bind: ./workspace, target: /workspace",
			"nothing is mounted at /workspace, where the agent works")
	}
}

// loadAgents reads the agent presets' manifests from the embedded templates
// (the same files generator.LoadAgent reads; schema cannot import generator).
func loadAgents() []Agent {
	entries, err := fs.ReadDir(templates.FS, "agents")
	if err != nil {
		return nil
	}
	var out []Agent
	for _, e := range entries {
		raw, err := fs.ReadFile(templates.FS, path.Join("agents", e.Name(), "agent.yaml"))
		if err != nil {
			continue
		}
		var a Agent
		if yaml.Unmarshal(raw, &a) == nil && a.ConfigDir != "" {
			out = append(out, a)
		}
	}
	return out
}

// --- network ---------------------------------------------------------------

// egress describes what msb 0.7.2 lets the VM reach.
type egress struct {
	all   bool     // the whole (public) internet, but for deny
	allow []string // otherwise only these
	deny  []string // never these
}

// effectiveEgress is what msb 0.7.2 resolves network to, as observed with
// msb create + inspect: no key, "public", "open" and an object without
// allow entries (allow: [] included) reach the public internet; an object
// with allow entries reaches only them, whatever its policy (public's rule
// is dropped, none's deny-all becomes the allow list); a bare "none"
// reaches nothing. deny entries are subtracted in every form.
func effectiveEgress(nw *Network) egress {
	switch {
	case nw == nil:
		return egress{all: true}
	case nw.Short && nw.Policy == "none":
		return egress{}
	case nw.Short:
		return egress{all: true}
	case len(nw.Allow) > 0:
		return egress{allow: nw.Allow, deny: nw.Deny}
	case nw.Policy == "none":
		return egress{deny: nw.Deny}
	}
	return egress{all: true, deny: nw.Deny}
}

// reaches reports whether host (a domain or *.domain) is reachable.
func (e egress) reaches(host string) bool {
	if covers(e.deny, host) {
		return false
	}
	return e.all || covers(e.allow, host)
}

// covers reports whether a list of domains and *.domains takes in host.
func covers(list []string, host string) bool {
	for _, a := range list {
		if strings.EqualFold(a, host) {
			return true
		}
		if d, ok := strings.CutPrefix(a, "*."); ok && strings.HasSuffix(strings.ToLower(strings.TrimPrefix(host, "*.")), "."+strings.ToLower(d)) {
			return true
		}
	}
	return false
}

func (c *checker) checkNetwork() {
	nw := c.sb.Network
	n := c.sbL.at["network"]
	if nw == nil {
		if c.sbL.at["network"] == nil && !c.sbL.hasKey("network") {
			c.add(Problem{File: SandboxFile, Severity: SeverityWarning, Field: "network",
				Msg: "there is no network key: msb's default lets the VM reach the whole public internet",
				Fix: "add network: {allow: [HOST, …]} to allow only the hosts the agent needs"})
		}
		return
	}
	if nw.Short {
		n = c.sbL.at["network"]
	} else if p := c.sbL.at["network.policy"]; p != nil {
		n = p
	}
	switch {
	case nw.Policy == "open":
		c.at(SandboxFile, n, SeverityWarning, "network", "use network: {allow: [HOST, …]} to allow only the hosts the agent needs",
			"network is open: the VM can reach the whole internet, private ranges and the host included")
	case nw.Policy == "public" && len(nw.Allow) > 0:
		c.at(SandboxFile, n, SeverityWarning, "network.policy", "remove policy: public to keep only the allow list, or remove allow for the whole internet",
			"policy public combined with allow: msb 0.7.2 then drops the public rule, so only the allow list is reachable")
	case nw.Policy == "public":
		c.at(SandboxFile, n, SeverityWarning, "network", "use network: {allow: [HOST, …]} to allow only the hosts the agent needs",
			"network is public: the VM can reach the whole public internet (egress is not limited to the agent's hosts)")
	}
	for i, h := range nw.Allow {
		if !ValidHost(h) {
			f := fmt.Sprintf("network.allow[%d]", i)
			c.at(SandboxFile, c.sbL.at[f], SeverityError, f, ruleHelp["asb_host"], "%s %q is not a domain name or *.domain", f, h)
		}
	}
}

func (l *loader) hasKey(key string) bool { return l.at[key] != nil }

// --- secrets ---------------------------------------------------------------

func (c *checker) checkSecrets() {
	names := make([]string, 0, len(c.sec))
	for name := range c.sec {
		names = append(names, name)
	}
	sort.Strings(names)
	eg := egress{all: true}
	if c.sb != nil {
		eg = effectiveEgress(c.sb.Network)
	}
	for _, name := range names {
		s := c.sec[name]
		key := c.secL.at[name+".key"]
		if !ValidEnvName(name) {
			c.at(SecretsFile, key, SeverityError, name, ruleHelp["asb_env"],
				"secret name %q is not an environment variable name; the VM sees it as one", name)
		}
		vnode := c.secL.at[name+".value"]
		switch ref, ok := EnvRef(s.Value); {
		case s.Value == "":
			c.at(SecretsFile, key, SeverityError, name+".value", fmt.Sprintf("add value: \"${%s}\" and put the real value in secrets.env", envGuess(name)),
				"secret %s has no value", name)
		case !ok && !strings.HasPrefix(s.Value, "${"):
			// Never echo s.Value: it may be the credential itself.
			c.at(SecretsFile, vnode, SeverityError, name+".value",
				fmt.Sprintf("move the value to secrets.env as %s=…, and write value: \"${%s}\" here", envGuess(name), envGuess(name)),
				"%s.value is a literal, not \"${VAR}\": msb would store the credential in plain text, and this file is committed", name)
		case ok:
			if c.opts.Getenv(ref) == "" && !c.envFile[ref] {
				c.at(SecretsFile, vnode, SeverityWarning, name+".value",
					fmt.Sprintf("set %s in secrets.env (%s=…) or export it in your shell", ref, ref),
					"%s is set neither in the environment nor in secrets.env: vm:create would fail with msb's \"host environment variable %s is not set\"", ref, ref)
			}
		}
		if len(s.Allow) == 0 {
			n := c.secL.at[name+".allow"]
			if n == nil {
				n = key
			}
			c.at(SecretsFile, n, SeverityError, name+".allow", "add allow: [HOST] with the hosts that may receive it",
				"secret %s has no allow host (msb rejects it: at least one allowed host is required)", name)
		}
		for i, h := range s.Allow {
			f := fmt.Sprintf("%s.allow[%d]", name, i)
			n := c.secL.at[f]
			if !ValidHost(h) {
				c.at(SecretsFile, n, SeverityError, f, ruleHelp["asb_host"], "%s %q is not a domain name or *.domain", f, h)
				continue
			}
			if !eg.reaches(h) {
				fix := "add it to network.allow in sandbox.yaml (asb network allow " + h + ")"
				if c.sb.Network != nil && c.sb.Network.Policy == "none" {
					fix = "the network is none; use network: {allow: [" + h + "]}"
				}
				c.at(SecretsFile, n, SeverityWarning, f, fix,
					"%s: %s is not reachable: network.allow in sandbox.yaml does not cover it, so %s can never be used", f, h, name)
			}
		}
	}
}

// --- secrets.env -----------------------------------------------------------

func (c *checker) checkSecretsEnv() {
	c.envFile = map[string]bool{}
	data, ok, err := c.read(SecretsEnvFile)
	if err != nil {
		c.add(Problem{File: SecretsEnvFile, Severity: SeverityError, Msg: "cannot read the file: " + errText(err), Fix: "chmod 600 secrets.env; it must be readable by you"})
	}
	if ok {
		c.parseEnv(data)
		if fi, err := os.Stat(filepath.Join(c.dir, SecretsEnvFile)); err == nil && fi.Mode().Perm()&0o077 != 0 {
			c.add(Problem{File: SecretsEnvFile, Severity: SeverityError,
				Msg: fmt.Sprintf("secrets.env is readable by others (mode %04o)", fi.Mode().Perm()), Fix: "chmod 600 secrets.env"})
		}
	}
	_, hasSecrets, _ := c.read(SecretsFile)
	if !ok && !hasSecrets {
		return
	}
	c.checkIgnored()
	if ok {
		tracked, err := c.tracked(SecretsEnvFile)
		if err == nil && tracked {
			c.add(Problem{File: SecretsEnvFile, Severity: SeverityError,
				Msg: "secrets.env is tracked by git: its values are in the repository",
				Fix: "git rm --cached secrets.env, commit, and rotate every credential it ever held"})
		}
	}
}

// parseEnv notes which names secrets.env sets (the values are dropped).
func (c *checker) parseEnv(data []byte) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for line := 1; sc.Scan(); line++ {
		t := strings.TrimSpace(sc.Text())
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		t = strings.TrimPrefix(t, "export ")
		name, val, ok := strings.Cut(t, "=")
		name = strings.TrimSpace(name)
		if !ok || !ValidEnvName(name) {
			// Never echo the line: it may hold a credential.
			c.add(Problem{File: SecretsEnvFile, Line: line, Col: 1, Severity: SeverityError,
				Msg: "this line is not NAME=VALUE; go-task cannot load the file", Fix: "write NAME=VALUE, or start the line with # to comment it out"})
			continue
		}
		val = strings.TrimSpace(val)
		if i := strings.Index(val, " #"); i >= 0 && !strings.HasPrefix(val, `"`) && !strings.HasPrefix(val, "'") {
			val = strings.TrimSpace(val[:i])
		}
		val = strings.Trim(val, `"'`)
		c.envFile[name] = val != ""
	}
}

func (c *checker) git(args ...string) (int, error) {
	cmd := exec.CommandContext(c.ctx, "git", append([]string{"-C", c.dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), nil
	}
	if err != nil {
		return -1, err
	}
	return 0, nil
}

func (c *checker) inRepo() bool {
	code, err := c.git("rev-parse", "--is-inside-work-tree")
	return err == nil && code == 0
}

func (c *checker) tracked(rel string) (bool, error) {
	if c.opts.Tracked != nil {
		return c.opts.Tracked(rel)
	}
	if !c.inRepo() {
		return false, nil
	}
	code, err := c.git("ls-files", "--error-unmatch", "--", rel)
	return err == nil && code == 0, err
}

func (c *checker) checkIgnored() {
	gi, _, _ := c.read(GitignoreFile)
	_, overridden := c.opts.Overrides[GitignoreFile]
	ignored := gitignoreMatches(gi, SecretsEnvFile)
	how := "the .gitignore of the outer folder does not ignore it"
	if c.opts.Tracked == nil && !overridden && c.inRepo() {
		code, err := c.git("check-ignore", "-q", "--no-index", "--", SecretsEnvFile)
		if err == nil && (code == 0 || code == 1) {
			ignored = code == 0
			how = "git check-ignore says it is not ignored"
		}
	}
	if !ignored {
		c.add(Problem{File: GitignoreFile, Severity: SeverityError,
			Msg: "secrets.env is not git-ignored (" + how + "): a commit could publish the credentials",
			Fix: "add the line /secrets.env to .gitignore"})
	}
}

// gitignoreMatches reports whether the .gitignore content ignores the file
// rel (a path at the root of the folder). It handles the common forms:
// comments, negation, anchored and unanchored globs, **/ and trailing /.
func gitignoreMatches(content []byte, rel string) bool {
	ignored := false
	for line := range strings.SplitSeq(string(content), "\n") {
		p := strings.TrimRight(line, " \r")
		if p == "" || strings.HasPrefix(p, "#") {
			continue
		}
		neg := strings.HasPrefix(p, "!")
		p = strings.TrimPrefix(p, "!")
		p = strings.TrimPrefix(p, `\`)
		if strings.HasSuffix(p, "/") {
			continue // a folder pattern never matches a file at the root
		}
		p = strings.TrimPrefix(p, "**/")
		anchored := strings.Contains(strings.TrimPrefix(p, "/"), "/") || strings.HasPrefix(p, "/")
		p = strings.TrimPrefix(p, "/")
		var ok bool
		if anchored {
			ok, _ = path.Match(p, rel)
		} else {
			ok, _ = path.Match(p, path.Base(rel))
		}
		if ok {
			ignored = !neg
		}
	}
	return ignored
}

// --- Taskfile.yml ----------------------------------------------------------

func (c *checker) checkTaskfile() {
	data, ok, err := c.read(TaskfileFile)
	if err != nil {
		c.add(Problem{File: TaskfileFile, Severity: SeverityError, Msg: "cannot read the file: " + errText(err), Fix: "make it readable"})
		return
	}
	if !ok {
		c.add(Problem{File: TaskfileFile, Severity: SeverityWarning, Msg: "the outer folder has no Taskfile.yml: asb task has nothing to run",
			Fix: "run asb init --agent AGENT again to restore it"})
		return
	}
	c.probs = append(c.probs, CheckTaskfile(TaskfileFile, data)...)
}

// CheckTaskfile reads a Taskfile the way go-task v3 does (yaml into
// ast.Taskfile) and reports its error with the line.
func CheckTaskfile(file string, data []byte) []Problem {
	var tf ast.Taskfile
	err := yaml.Unmarshal(data, &tf)
	if err == nil {
		if tf.Version == nil {
			return []Problem{{File: file, Line: 1, Col: 1, Severity: SeverityError, Field: "version",
				Msg: "Taskfile.yml has no version; go-task refuses it", Fix: "add version: '3' at the top"}}
		}
		if tf.Version.Major() != 3 {
			return []Problem{{File: file, Line: 1, Col: 1, Severity: SeverityError, Field: "version",
				Msg: fmt.Sprintf("Taskfile.yml has version %s; asb's go-task reads version 3", tf.Version), Fix: "use version: '3'"}}
		}
		return nil
	}
	p := Problem{File: file, Severity: SeverityError, Fix: "fix Taskfile.yml at that line (see taskfile.dev/reference/schema)"}
	var de *taskerrors.TaskfileDecodeError
	if errors.As(err, &de) {
		p.Line, p.Col = de.Line, de.Column
		p.Msg = "go-task cannot read it: " + decodeMessage(de)
	} else {
		lp := newLoader(file)
		lp.syntaxError(data, err)
		p = lp.probs[0]
		p.Msg = "go-task cannot read it: " + p.Msg
	}
	if p.Line <= 0 {
		p.Line = 1
	}
	return []Problem{p}
}

func decodeMessage(de *taskerrors.TaskfileDecodeError) string {
	if de.Message != "" {
		return de.Message
	}
	var te *yaml.TypeError
	if errors.As(de.Err, &te) && len(te.Errors) > 0 {
		msgs := slices.Clone(te.Errors)
		for i, m := range msgs {
			msgs[i] = yamlLineRe.ReplaceAllString(strings.TrimPrefix(m, "yaml: "), "")
			msgs[i] = strings.Trim(msgs[i], ": ")
		}
		return strings.Join(msgs, "; ")
	}
	if de.Err != nil {
		return strings.TrimPrefix(de.Err.Error(), "yaml: ")
	}
	return "invalid Taskfile"
}
