package schema

import (
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/agents-sandbox/asb/templates"
)

// asb's own presets (templates/agents/NAME/agent.yaml, embedded) never
// change within a process, so they are read and checked once, by
// ownAgents, and that one parse serves every caller of whole presets: the
// presets CheckDir knows (DefaultAgents) and generator.LoadAgent of the
// embedded tree. The table of files host tools run (OwnHostRunTable), which
// every agent run needs after the VM returns, reads only each manifest's
// host_run, once: the whole parse, every value checked, was the warm path's
// largest piece of work (a third of what asb itself did in a warm
// asb task agent). Each caller gets copies.

// DecodeAgent reads the manifest of preset name: every key known, every
// value checked.
func DecodeAgent(name string, raw []byte) (Agent, error) {
	var a Agent
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&a); err != nil {
		return Agent{}, fmt.Errorf("agents/%s/agent.yaml: %w", name, err)
	}
	if err := agentValidator().Struct(&a); err != nil {
		return Agent{}, fmt.Errorf("agents/%s/agent.yaml: %w", name, Explain(err, ""))
	}
	return a, nil
}

// agentValidator checks every manifest of the process (its Struct is safe
// for concurrent use; nothing registers on it after NewValidator).
var agentValidator = sync.OnceValue(NewValidator)

// ownAgent is one embedded preset as DecodeAgent read it.
type ownAgent struct {
	name  string
	agent Agent
	err   error
}

var ownAgents = sync.OnceValue(func() []ownAgent {
	entries, _ := fs.ReadDir(templates.FS, "agents")
	var out []ownAgent
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		o := ownAgent{name: e.Name()}
		raw, err := fs.ReadFile(templates.FS, path.Join("agents", e.Name(), "agent.yaml"))
		if err != nil {
			o.err = fmt.Errorf("agent %s: %w", e.Name(), err)
		} else {
			o.agent, o.err = DecodeAgent(e.Name(), raw)
		}
		out = append(out, o)
	}
	return out
})

// OwnAgentNames lists asb's own presets.
func OwnAgentNames() []string {
	var names []string
	for _, o := range ownAgents() {
		names = append(names, o.name)
	}
	return names
}

// OwnAgent returns a copy of asb's own preset name as DecodeAgent read it;
// found is false when there is no such preset.
func OwnAgent(name string) (a Agent, found bool, err error) {
	i := slices.IndexFunc(ownAgents(), func(o ownAgent) bool { return o.name == name })
	if i < 0 {
		return Agent{}, false, nil
	}
	o := ownAgents()[i]
	return o.agent.Clone(), true, o.err
}

// DefaultAgents are the agent presets of asb's embedded templates: the
// config folders and guest targets CheckDir knows when not told others.
// Each call gets its own copies.
func DefaultAgents() []Agent {
	var out []Agent
	for _, o := range ownAgents() {
		if o.err == nil {
			out = append(out, o.agent.Clone())
		}
	}
	return out
}

// OwnHostRunTable is the table of files host tools run (NewHostRunTable)
// of asb's own presets, a copy each call. Their host_run lists are Go
// (ownPresetHostRun, hostrun_own.go), made from the manifests when they
// change, not parsed at each run: a warm asb task agent's review needs the
// table, and a YAML parse of five manifests was a tenth of that run's CPU.
func OwnHostRunTable() (HostRunTable, error) {
	return slices.Clone(ownHostRunTable()), nil
}

var ownHostRunTable = sync.OnceValue(func() HostRunTable { return NewHostRunTable(ownPresetHostRun...) })

// ReadHostRunTable is the table of the presets names of tree
// (agents/NAME/agent.yaml), each manifest's host_run key alone
// (ReadHostRun), merged by NewHostRunTable.
func ReadHostRunTable(tree fs.FS, names []string) (HostRunTable, error) {
	each, err := readHostRuns(tree, names)
	if err != nil {
		return nil, err
	}
	return NewHostRunTable(each...), nil
}

// readHostRuns is the host_run list of each preset of names in tree, in
// that order.
func readHostRuns(tree fs.FS, names []string) ([][]HostRun, error) {
	var each [][]HostRun
	for _, name := range names {
		raw, err := fs.ReadFile(tree, path.Join("agents", name, "agent.yaml"))
		if err != nil {
			return nil, fmt.Errorf("agent %s: %w", name, err)
		}
		h, err := ReadHostRun(name, raw)
		if err != nil {
			return nil, err
		}
		each = append(each, h)
	}
	return each, nil
}

// ReadHostRun reads only the host_run key of preset name's manifest, what
// the table of files host tools run needs (DecodeAgent checks the whole).
func ReadHostRun(name string, raw []byte) ([]HostRun, error) {
	var m struct {
		HostRun []HostRun `yaml:"host_run"`
	}
	if err := yaml.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("agents/%s/agent.yaml: %w", name, err)
	}
	return m.HostRun, nil
}
