package schema

import (
	"fmt"
	"sort"

	"go.yaml.in/yaml/v3"
)

// checkPolicy applies the policy in force (CheckOptions.Policy) to what
// the folder declares: sandbox.yaml's network, mounts, ports, image, CPUs
// and memory, secrets.yaml's hosts, the images toolchain/Dockerfile's
// build may pull and the disks of the Taskfile. The Taskfile's commands are
// code, which approval (asb trust) covers, not the policy.
func (c *checker) checkPolicy() {
	p := c.opts.Policy
	if p.Empty() {
		return
	}
	if c.sb != nil {
		c.policyNetwork(p)
		c.policyMounts(p)
		c.policyPorts(p)
		c.policyResources(p)
	}
	if c.sec != nil {
		names := make([]string, 0, len(c.sec))
		for n := range c.sec {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			for i, h := range c.sec[n].Allow {
				f := fmt.Sprintf("%s.allow[%d]", n, i)
				c.policy(SecretsFile, c.secL.at[f], f, p.SecretHost(n, h))
			}
		}
	}
	c.policyImages(p)
	c.policyDisks(p)
}

// policy adds r, a refusal of the policy, as an error at n.
func (c *checker) policy(file string, n *yaml.Node, field string, r *PolicyRefusal) {
	if r == nil {
		return
	}
	c.at(file, n, SeverityError, field, r.Fix, "%s", r.Error())
}

func (c *checker) sbNode(field string) *yaml.Node {
	if n := c.sbL.at[field]; n != nil {
		return n
	}
	return c.sbRoot
}

func (c *checker) policyNetwork(p *Policy) {
	nw := c.sb.Network
	mode := PolicyModeOf(nw)
	c.policy(SandboxFile, c.sbNode("network"), "network", p.NetworkMode(mode))
	var deny []string
	if nw != nil {
		deny = nw.Deny
		for i, h := range nw.Allow {
			f := fmt.Sprintf("network.allow[%d]", i)
			c.policy(SandboxFile, c.sbNode(f), f, p.AllowHost(h))
		}
	}
	c.policy(SandboxFile, c.sbNode("network"), "network", p.Reaches(mode, deny))
}

func (c *checker) policyMounts(p *Policy) {
	for k, m := range c.sb.Mounts {
		if m.Kind != "bind" {
			continue
		}
		i := c.sbL.mountIndex[k]
		if h := c.hostPath(m.Bind); h != "" && !Within(h, c.dir) {
			c.policy(SandboxFile, c.mountNode(i, "bind"), fmt.Sprintf("mounts[%d]", i), p.HostBind(h))
		}
	}
}

func (c *checker) policyPorts(p *Policy) {
	check := func(list []string, field string) {
		for i, s := range list {
			f := fmt.Sprintf("%s[%d]", field, i)
			c.policy(SandboxFile, c.sbNode(f), f, p.Port(s))
		}
	}
	check(c.sb.Ports, "ports")
	if c.sb.Network != nil {
		check(c.sb.Network.Ports, "network.ports")
	}
}

func (c *checker) policyResources(p *Policy) {
	if c.sb.CPUs > 0 {
		c.policy(SandboxFile, c.sbNode("cpus"), "cpus", p.CPUs(c.sb.CPUs))
	}
	if c.sb.Memory != "" {
		c.policy(SandboxFile, c.sbNode("memory"), "memory", p.Memory(c.sb.Memory))
	}
}

// policyImages judges every image toolchain/Dockerfile's build may pull
// (BaseImages) and sandbox.yaml's image, unless that is the one asb builds
// from toolchain/ (the Taskfile's IMAGE). What of toolchain/ asb cannot
// judge (checkToolchain) is refused where images_from is set.
func (c *checker) policyImages(p *Policy) {
	vars := c.taskVars()
	if c.sb != nil && c.sb.Image != "" && c.sb.Image != vars["IMAGE"] {
		c.policy(SandboxFile, c.sbNode("image"), "image", p.Image(c.sb.Image))
	}
	if !p.JudgesImages() {
		return
	}
	c.checkToolchain()
	for _, img := range c.dockerfile().images {
		if r := p.Image(img.Ref); r != nil {
			c.add(Problem{File: DockerfilePath, Line: img.Line, Severity: SeverityError, Field: img.Via, Msg: r.Error(), Fix: r.Fix})
		}
	}
}

// policyDisks judges the Taskfile's disks (ROOT_DISK, CONTAINER_DISK);
// no ROOT_DISK is msb's own size.
func (c *checker) policyDisks(p *Policy) {
	vars, nodes := c.taskVarNodes()
	if vars == nil {
		return
	}
	for _, l := range Limits {
		if l.Where != InTaskfile || l.Kind != "size" {
			continue
		}
		v, ok := vars[l.Key]
		if !ok && l.Name == LimitRootDisk {
			v = DefaultRootDisk
		}
		if v != "" {
			c.policy(TaskfileFile, nodes[l.Key], "vars."+l.Key, p.Disk(l.Name, v))
		}
	}
}

// taskVars are the Taskfile's plain vars.
func (c *checker) taskVars() map[string]string {
	vars, _ := c.taskVarNodes()
	return vars
}

func (c *checker) taskVarNodes() (map[string]string, map[string]*yaml.Node) {
	data, ok, err := c.read(TaskfileFile)
	if err != nil || !ok {
		return nil, nil
	}
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return nil, nil
	}
	vars, nodes := map[string]string{}, map[string]*yaml.Node{}
	m := mapValue(doc.Content[0], "vars")
	if m == nil || m.Kind != yaml.MappingNode {
		return vars, nodes
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if v := m.Content[i+1]; v.Kind == yaml.ScalarNode {
			vars[m.Content[i].Value], nodes[m.Content[i].Value] = v.Value, v
		}
	}
	return vars, nodes
}

// CheckPolicy applies only the policy to the outer folder dir (with
// opts.Overrides in place of files: asb init checks the plan it would
// write).
func CheckPolicy(dir string, opts CheckOptions) []Problem {
	c := newChecker(dir, opts)
	if data, ok, err := c.read(SandboxFile); err == nil && ok {
		c.sbL = newLoader(SandboxFile)
		c.sb, c.sbRoot = c.sbL.sandbox(data)
	}
	if data, ok, err := c.read(SecretsFile); err == nil && ok {
		c.secL = newLoader(SecretsFile)
		c.sec, c.secRoot = c.secL.secrets(data)
	}
	c.checkPolicy()
	SortProblems(c.probs)
	return c.probs
}
