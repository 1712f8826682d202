package schema

import (
	"fmt"
	"io/fs"
	"path"
	"path/filepath"

	"github.com/agents-sandbox/asb/templates"
	"go.yaml.in/yaml/v3"
)

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
