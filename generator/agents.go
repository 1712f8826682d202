package generator

import (
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agents-sandbox/asb/schema"
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

// LoadAgent reads and validates the manifest of one preset.
func LoadAgent(tree fs.FS, name string) (schema.Agent, error) {
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
	if err := schema.NewValidator().Struct(&a); err != nil {
		return schema.Agent{}, fmt.Errorf("agents/%s/agent.yaml: %w", name, schema.Explain(err, ""))
	}
	return a, nil
}
