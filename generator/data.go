package generator

import (
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/agents-sandbox/asb/schema"
)

// AgentLayer is one agent's part of the image: its packages, and the ARG
// that pins its version (AGENT_VERSION for the preset, NAME_VERSION for an
// agent added to it).
type AgentLayer struct {
	Agent   schema.Agent
	Version string
	Arg     string
}

// addAlso loads the further agents and lays out every agent's image layer.
func (d *Data) addAlso(tree fs.FS, also []string) error {
	d.Layers = []AgentLayer{{Agent: d.Agent, Version: d.AgentVersion, Arg: "AGENT_VERSION"}}
	for _, name := range also {
		if name == d.Agent.Name || slices.ContainsFunc(d.Also, func(a schema.Agent) bool { return a.Name == name }) {
			return &schema.FieldError{Field: "agent", Value: name, Fix: name + " is in this outer folder already"}
		}
		a, err := LoadAgent(tree, name)
		if err != nil {
			return err
		}
		if a.ConfigDir == d.Agent.ConfigDir || a.MountTarget == d.Agent.MountTarget {
			return &schema.FieldError{Field: "agent", Value: name, Fix: "its config folder or target is " + d.Agent.Name + "'s"}
		}
		d.Also = append(d.Also, a)
		arg := strings.ToUpper(strings.ReplaceAll(a.Name, "-", "_")) + "_VERSION"
		d.Layers = append(d.Layers, AgentLayer{Agent: a, Version: a.Version, Arg: arg})
	}
	return nil
}

// addSecrets binds each agent's key (the preset's first; a key two agents
// share is bound once, to both agents' hosts), then each --secret.
func (d *Data) addSecrets(specs []schema.SecretSpec) error {
	agent := d.Agent
	d.Secrets = append(d.Secrets, Secret{Name: agent.KeyVar, Hosts: agent.Hosts})
	for _, a := range d.Also {
		if i := slices.IndexFunc(d.Secrets, func(s Secret) bool { return s.Name == a.KeyVar }); i >= 0 {
			d.Secrets[i].Hosts = dedup(append(slices.Clone(d.Secrets[i].Hosts), a.Hosts...))
			continue
		}
		d.Secrets = append(d.Secrets, Secret{Name: a.KeyVar, Hosts: a.Hosts})
	}
	for _, s := range specs {
		if slices.ContainsFunc(d.Secrets, func(b Secret) bool { return b.Name == s.Name }) {
			return &schema.FieldError{Field: "--secret", Value: s.Name,
				Fix: fmt.Sprintf("%s is already bound to %s by the %s preset; add hosts with --allow or pick another name", s.Name, strings.Join(agent.Hosts, ","), agent.Name)}
		}
		d.Secrets = append(d.Secrets, Secret{Name: s.Name, Hosts: s.Hosts})
	}
	return nil
}

// addHosts makes the allow list: the agent's hosts, each secret's, --allow,
// and for --network balanced the profile's hosts the list lacks.
func (d *Data) addHosts(opts schema.InitOptions) {
	if opts.Network != schema.NetworkAllow && opts.Network != schema.NetworkBalanced {
		return
	}
	hosts := append([]string{}, d.Agent.Hosts...)
	for _, a := range d.Also {
		hosts = append(hosts, a.Hosts...)
	}
	for _, s := range d.Secrets {
		hosts = append(hosts, s.Hosts...)
	}
	d.Hosts = dedup(append(hosts, opts.Allow...))
	if opts.Network != schema.NetworkBalanced {
		return
	}
	for _, g := range schema.BalancedHosts {
		var left []string
		for _, h := range g.Hosts {
			if !slices.Contains(d.Hosts, h) {
				left = append(left, h)
			}
		}
		if len(left) > 0 {
			d.Balanced = append(d.Balanced, schema.HostGroup{Name: g.Name, Hosts: left})
		}
	}
}
