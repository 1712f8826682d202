package schema

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// bindSeen is a bind mount already judged, for the checks between mounts.
type bindSeen struct {
	index    int
	host     string
	readonly bool
}

func (c *checker) mountNode(i int, key string) *yaml.Node {
	f := fmt.Sprintf("mounts[%d]", i)
	if n := c.sbL.at[f+"."+key]; n != nil {
		return n
	}
	return c.sbL.at[f]
}

// mountRules are the mount policy (rules_mounts.go) for this folder.
func (c *checker) mountRules() MountRules {
	own := []string{WorkspaceMount, HomeMount}
	for _, a := range c.agents {
		own = append(own, a.MountTarget)
	}
	return MountRules{Dir: c.dir, Home: c.home, Getenv: c.opts.Getenv, Own: own}
}

func (c *checker) checkMounts() {
	rules := c.mountRules()
	var binds []bindSeen
	guests := map[string]int{}
	workspace := false
	for k, m := range c.sb.Mounts {
		i := c.sbL.mountIndex[k]
		f := fmt.Sprintf("mounts[%d]", i)
		target := path.Clean(m.Target)
		if target == WorkspaceMount {
			workspace = true
			if m.Readonly {
				c.at(SandboxFile, c.mountNode(i, "readonly"), SeverityError, f, "drop readonly (or :ro): the agent works in /workspace",
					"/workspace is mounted read-only; the agent cannot change the project")
			}
		}
		if first, dup := guests[target]; dup {
			c.at(SandboxFile, c.mountNode(i, "target"), SeverityError, f, "keep one of them (the first is mounts["+fmt.Sprint(first)+"])",
				"%s is mounted twice", target)
		} else {
			guests[target] = i
		}
		if IsTmpLimit(m) {
			// asb's tmp-size limit: allowed at /tmp, which guestTops keeps
			// other mounts off.
		} else if re := rules.GuestPath(target, c.ownMount(m)); re != nil {
			c.rule(SandboxFile, c.mountNode(i, "target"), f, "mount target", re)
		}
		if m.Kind == "bind" {
			if b, ok := c.checkBind(i, m, rules, binds); ok {
				binds = append(binds, b)
				if target == WorkspaceMount {
					c.checkWorkspace(i, m)
				}
			}
		}
	}
	c.checkAgentTargets()
	c.checkShadowedReadonly(binds)
	if n, ok := c.sbL.at["mounts"]; !workspace && (!ok || len(n.Content) == len(c.sb.Mounts)) {
		n := c.sbL.at["mounts"]
		if n == nil {
			n = c.sbRoot
		}
		c.at(SandboxFile, n, SeverityError, "mounts", "add a mount: - bind: ./workspace, target: /workspace",
			"nothing is mounted at /workspace, where the agent works")
	}
}

// ownMount reports whether m is one asb itself writes: workspace/ at
// /workspace, or an agent's config folder at its target.
func (c *checker) ownMount(m Mount) bool {
	t := path.Clean(m.Target)
	if t == WorkspaceMount {
		return true
	}
	for _, a := range c.agents {
		if t == a.MountTarget {
			return true
		}
	}
	return false
}

// checkBind applies the host side of the policy to a bind mount; ok is
// false when the mount was refused (it takes no part in the checks between
// mounts).
func (c *checker) checkBind(i int, m Mount, rules MountRules, earlier []bindSeen) (bindSeen, bool) {
	f := fmt.Sprintf("mounts[%d]", i)
	n := c.mountNode(i, "bind")
	h := c.hostPath(m.Bind)
	if h == "" {
		c.at(SandboxFile, n, SeverityError, f, "use a path relative to the outer folder", "mount %q uses ~ but $HOME is unknown", m.Bind)
		return bindSeen{}, false
	}
	lexical := c.lexicalPath(m.Bind) // as written, made absolute, nothing followed
	consent := hasComment(rules.Consent(h), n)
	if re := rules.HostFolder(h, consent); re != nil {
		if lexical != "" && lexical != h {
			re.Why = "(a link to " + h + ") " + re.Why
		}
		re.Value = m.Bind
		c.rule(SandboxFile, n, f, "mount", re)
		return bindSeen{}, false
	}
	if re := BindDotDot(m.Bind, c.rel(lexical)); re != nil {
		c.rule(SandboxFile, n, f, "mount", re)
		return bindSeen{}, false
	}
	if re := BindLink(c.dir, lexical); re != nil {
		re.Value = m.Bind
		c.rule(SandboxFile, n, f, "mount", re)
		return bindSeen{}, false
	}
	if s := secretFileIn(h); s != "" {
		c.at(SandboxFile, n, SeverityError, f, "move the secrets file out of the mounted folder, or mount a folder without it",
			"mount %q contains %s: the VM could read the credentials", m.Bind, c.rel(s))
		return bindSeen{}, false
	}
	for _, e := range earlier {
		if e.host == h {
			c.at(SandboxFile, n, SeverityError, f, "keep one of them", "mount %q mounts the host folder %s that mounts[%d] mounts already", m.Bind, h, e.index)
			return bindSeen{}, false
		}
	}
	switch {
	case Within(h, c.dir):
	case rules.Consent(h) == HomeConsent:
		c.at(SandboxFile, n, SeverityWarning, f, "make sure nothing in it is a credential",
			"mount %q is under your home folder $HOME, allowed by its # %s comment", m.Bind, HomeConsent)
	default:
		c.at(SandboxFile, n, SeverityWarning, f, "make sure nothing in it is a credential",
			"mount %q is the host folder %s, outside the outer folder, allowed by its # %s comment", m.Bind, h, HostConsent)
	}
	if !m.Readonly {
		for _, a := range c.agents {
			if Within(resolvePath(filepath.Join(c.dir, filepath.FromSlash(a.ConfigDir))), h) {
				c.at(SandboxFile, n, SeverityError, f, "add readonly: true (or :ro): the agent must not rewrite its own settings",
					"mount %q makes %s's config folder %s/ writable in the VM", m.Bind, a.Name, a.ConfigDir)
				break
			}
		}
	}
	return bindSeen{index: i, host: h, readonly: m.Readonly}, true
}

// checkWorkspace: what is mounted at /workspace must be a folder inside
// the outer folder (a link on the way is refused for every bind, BindLink:
// msb does not follow it, and a committed link could point anywhere).
func (c *checker) checkWorkspace(i int, m Mount) {
	n := c.mountNode(i, "bind")
	f := fmt.Sprintf("mounts[%d]", i)
	p := m.Bind
	if filepath.IsAbs(p) || strings.HasPrefix(p, "~") {
		p = c.rel(c.hostPath(p))
	}
	rel := filepath.Clean(filepath.FromSlash(p))
	if filepath.IsAbs(rel) || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return // the mount policy refuses it (outside, or the folder itself)
	}
	cur := c.dir
	for part := range strings.SplitSeq(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		switch {
		case err != nil:
			return // HostKind: msb fails to start; CheckDir does not ask for it
		case !fi.IsDir():
			c.at(SandboxFile, n, SeverityError, f, "make workspace/ a folder", "mount %q at /workspace is not a folder", m.Bind)
			return
		}
	}
}

// checkAgentTargets refuses a writable mount over an agent's config target,
// whatever its source.
func (c *checker) checkAgentTargets() {
	for k, m := range c.sb.Mounts {
		i := c.sbL.mountIndex[k]
		if m.Readonly || m.Target == "" {
			continue
		}
		for _, a := range c.agents {
			if path.Clean(m.Target) != a.MountTarget {
				continue
			}
			if m.Bind != "" && Within(resolvePath(filepath.Join(c.dir, filepath.FromSlash(a.ConfigDir))), c.hostPath(m.Bind)) {
				continue // reported by checkBind
			}
			c.at(SandboxFile, c.mountNode(i, "target"), SeverityError, fmt.Sprintf("mounts[%d]", i),
				"add readonly: true (or :ro)", "%s is %s's config folder in the VM and is mounted writable", a.MountTarget, a.Name)
		}
	}
}

// checkShadowedReadonly warns when a read-only mount's folder is also
// inside a writable one: the VM can change it through the other path.
func (c *checker) checkShadowedReadonly(binds []bindSeen) {
	for _, ro := range binds {
		if !ro.readonly {
			continue
		}
		for _, rw := range binds {
			if !rw.readonly && ro.host != rw.host && Within(ro.host, rw.host) {
				c.at(SandboxFile, c.mountNode(ro.index, "bind"), SeverityWarning, fmt.Sprintf("mounts[%d]", ro.index),
					"mount it from outside the writable folder, or make that one read-only too",
					"mounts[%d] is read-only, but its folder is inside mounts[%d], which is writable: the VM can change it there", ro.index, rw.index)
				break
			}
		}
	}
}

// rule reports a RuleError of the mount policy at n.
func (c *checker) rule(file string, n *yaml.Node, field, what string, re *RuleError) {
	c.at(file, n, SeverityError, field, re.Fix, "%s %q %s", what, re.Value, re.Why)
}
