package schema

import (
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sync"

	"go.yaml.in/yaml/v3"
)

// asb's own presets (templates/agents/NAME/agent.yaml, embedded) never
// change within a process, nor between two builds of the same manifests:
// they are Go (ownPresets, presets_own.go), made from the manifests by make
// examples, which DecodeAgent reads and checks (every key known, every
// value checked; TestOwnPresetsAreTheManifests fails when the two differ).
// Read at each run, the five manifests' YAML and their checks were about
// 1.3 ms of every command that judges a folder (asb boundary, validate,
// init): a third of asb's own start. Each caller gets copies.

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

// ownAgent is one of asb's own presets, by its folder's name.
type ownAgent struct {
	name  string
	agent Agent
}

// OwnAgentNames lists asb's own presets.
func OwnAgentNames() []string {
	var names []string
	for _, o := range ownPresets {
		names = append(names, o.name)
	}
	return names
}

// OwnAgent returns a copy of asb's own preset name; found is false when
// there is no such preset.
func OwnAgent(name string) (a Agent, found bool) {
	i := slices.IndexFunc(ownPresets, func(o ownAgent) bool { return o.name == name })
	if i < 0 {
		return Agent{}, false
	}
	return ownPresets[i].agent.Clone(), true
}

// DefaultAgents are the agent presets of asb's embedded templates: the
// config folders and guest targets CheckDir knows when not told others.
// Each call gets its own copies.
func DefaultAgents() []Agent {
	var out []Agent
	for _, o := range ownPresets {
		out = append(out, o.agent.Clone())
	}
	return out
}

// OwnHostRunTable is the table of files host tools run (NewHostRunTable)
// of asb's own presets, a copy each call: a warm asb task agent's review
// needs it after the VM returned.
func OwnHostRunTable() (HostRunTable, error) {
	return slices.Clone(ownHostRunTable()), nil
}

var ownHostRunTable = sync.OnceValue(func() HostRunTable {
	var each [][]HostRun
	for _, o := range ownPresets {
		each = append(each, o.agent.HostRun)
	}
	return NewHostRunTable(each...)
})

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
