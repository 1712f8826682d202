package initcmd

import (
	"fmt"
	"io"
	"path"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/outer"
)

// hostImport is what --import-host-config took from the host, and left.
type hostImport struct {
	from     string // ~/.config/opencode
	copied   []string
	replaced []string // of copied, those that take the place of a preset file
	skipped  []outer.HostSkip
}

// importHostConfig puts the agent's settings from the host into the plan,
// under the agent's config folder: reviewed in the report, committed with
// the rest. Nothing of $HOME is read without the flag.
func (o *Options) importHostConfig(plan *generator.Plan) (*hostImport, error) {
	agent, err := generator.LoadAgent(o.Templates, o.Init.Agent)
	if err != nil {
		return nil, err
	}
	if agent.HostConfig == nil {
		return nil, fmt.Errorf("--import-host-config: the %s preset names no host settings to copy; copy them into %s/ by hand", agent.Name, agent.ConfigDir)
	}
	files, skipped, err := outer.ReadHostConfig(o.Getenv("HOME"), agent.HostConfig)
	if err != nil {
		return nil, err
	}
	imp := &hostImport{from: "~/" + agent.HostConfig.From, skipped: skipped}
	for _, f := range files {
		p := path.Join(agent.ConfigDir, f.Rel)
		if _, ok := plan.Lookup(p); ok {
			imp.replaced = append(imp.replaced, p)
		}
		plan.Put(generator.File{Path: p, Mode: generator.ModeFile, Content: f.Content})
		imp.copied = append(imp.copied, p)
	}
	return imp, nil
}

// report says what was copied and what was left on the host, and why.
func (imp *hostImport) report(w io.Writer) {
	if imp == nil {
		return
	}
	fmt.Fprintf(w, "\nFrom %s (review before you commit):\n", imp.from)
	for _, c := range imp.copied {
		note := ""
		for _, r := range imp.replaced {
			if r == c {
				note = "  (yours, in place of the preset's: keep what the sandbox needs, e.g. autoupdate off)"
			}
		}
		fmt.Fprintf(w, "  copied   %s%s\n", c, note)
	}
	for _, s := range imp.skipped {
		fmt.Fprintf(w, "  skipped  %s: %s\n", s.Rel, s.Why)
	}
}
