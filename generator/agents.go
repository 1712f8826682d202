package generator

import (
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/agents-sandbox/asb/schema"
	"github.com/agents-sandbox/asb/templates"
)

// Agents lists the agent presets of the template tree.
func Agents(tree fs.FS) ([]string, error) {
	entries, err := fs.ReadDir(tree, "agents")
	if err != nil {
		return nil, fmt.Errorf("read agent presets: %w", err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// UnknownAgentError is returned for an --agent that has no preset.
type UnknownAgentError struct {
	Name  string
	Known []string
}

func (e *UnknownAgentError) Error() string {
	return fmt.Sprintf("--agent %q is not a known agent; choose one of: %s", e.Name, strings.Join(e.Known, ", "))
}

// LoadAgent reads and validates the manifest of one preset. asb's own
// embedded tree never changes: each of its presets is read and checked
// once per process, and every caller gets a copy of its own.
func LoadAgent(tree fs.FS, name string) (schema.Agent, error) {
	if tree != fs.FS(templates.FS) {
		return loadAgent(tree, name)
	}
	once, _ := ownAgents.LoadOrStore(name, sync.OnceValues(func() (schema.Agent, error) {
		return loadAgent(templates.FS, name)
	}))
	a, err := once.(func() (schema.Agent, error))()
	return a.Clone(), err
}

// ownAgents are the presets of templates.FS read so far, by name.
var ownAgents sync.Map

// agentValidator checks every manifest of the process (its Struct is safe
// for concurrent use; nothing registers on it after NewValidator).
var agentValidator = sync.OnceValue(schema.NewValidator)

func loadAgent(tree fs.FS, name string) (schema.Agent, error) {
	known, err := Agents(tree)
	if err != nil {
		return schema.Agent{}, err
	}
	if !slices.Contains(known, name) {
		return schema.Agent{}, &UnknownAgentError{Name: name, Known: known}
	}
	raw, err := fs.ReadFile(tree, path.Join("agents", name, "agent.yaml"))
	if err != nil {
		return schema.Agent{}, fmt.Errorf("agent %s: %w", name, err)
	}
	var a schema.Agent
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&a); err != nil {
		return schema.Agent{}, fmt.Errorf("agents/%s/agent.yaml: %w", name, err)
	}
	if err := agentValidator().Struct(&a); err != nil {
		return schema.Agent{}, fmt.Errorf("agents/%s/agent.yaml: %w", name, schema.Explain(err, ""))
	}
	return a, nil
}

// HostRunTable is the table of project files that host tools run or obey
// (schema.HostRun): the base part and every preset's host_run, once per
// path. It reads only that key of each manifest (the review after an
// agent run reads it; LoadAgent checks the whole manifest).
func HostRunTable(tree fs.FS) (schema.HostRunTable, error) {
	names, err := Agents(tree)
	if err != nil {
		return nil, err
	}
	table := append(schema.HostRunTable(nil), schema.BaseHostRun...)
	seen := map[string]bool{}
	for _, e := range table {
		seen[e.Path] = true
	}
	for _, name := range names {
		raw, err := fs.ReadFile(tree, path.Join("agents", name, "agent.yaml"))
		if err != nil {
			return nil, fmt.Errorf("agent %s: %w", name, err)
		}
		var m struct {
			HostRun []schema.HostRun `yaml:"host_run"`
		}
		if err := yaml.Unmarshal(raw, &m); err != nil {
			return nil, fmt.Errorf("agents/%s/agent.yaml: %w", name, err)
		}
		for _, e := range m.HostRun {
			if !seen[e.Path] {
				seen[e.Path] = true
				table = append(table, e)
			}
		}
	}
	return table, nil
}
