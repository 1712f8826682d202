package generator

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

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
// embedded tree never changes: its presets are Go, checked against the
// manifests by schema's tests (schema.OwnAgent), and every caller gets a
// copy of its own.
func LoadAgent(tree fs.FS, name string) (schema.Agent, error) {
	if tree != fs.FS(templates.FS) {
		return loadAgent(tree, name)
	}
	a, found := schema.OwnAgent(name)
	if !found {
		return schema.Agent{}, &UnknownAgentError{Name: name, Known: schema.OwnAgentNames()}
	}
	return a, nil
}

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
	return schema.DecodeAgent(name, raw)
}

// HostRunTable is the table of project files that host tools run or obey
// (schema.HostRun): the base part and every preset's host_run, once per
// path, from that key of each manifest alone (LoadAgent checks the whole
// manifest); for asb's own tree once per process (schema.OwnHostRunTable).
func HostRunTable(tree fs.FS) (schema.HostRunTable, error) {
	if tree == fs.FS(templates.FS) {
		return schema.OwnHostRunTable()
	}
	names, err := Agents(tree)
	if err != nil {
		return nil, err
	}
	return schema.ReadHostRunTable(tree, names)
}
