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
	agent    string
	from     string // ~/.config/opencode
	copied   []string
	replaced []string // of copied, those that take the place of a preset file
	skipped  []outer.HostSkip
	creds    []credNote // every credential found: none is copied
}

// importHostConfig puts the agent's settings from the host into the plan,
// under the agent's config folder: reviewed in the report, committed with
// the rest. Nothing of $HOME is read without the flag, and no credential
// is copied (guardHostFile).
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
	imp := &hostImport{agent: agent.Name, from: "~/" + agent.HostConfig.From, skipped: skipped}
	used := map[string]bool{agent.KeyVar: true}
	for _, f := range files {
		content, notes, ok := guardHostFile(agent.HostConfig, f, used)
		imp.creds = append(imp.creds, notes...)
		if !ok {
			imp.skipped = append(imp.skipped, outer.HostSkip{Rel: f.Rel, Why: fmt.Sprintf("holds a credential (named below), and %s reads no variable there: copy it by hand without the value", agent.Name)})
			continue
		}
		p := path.Join(agent.ConfigDir, f.Rel)
		if _, ok := plan.Lookup(p); ok {
			imp.replaced = append(imp.replaced, p)
		}
		plan.Put(generator.File{Path: p, Mode: generator.ModeFile, Content: content})
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
	imp.reportCredentials(w)
}

// reportCredentials names each credential left on the host (file, where,
// why; never the value), and the secret each reference needs.
func (imp *hostImport) reportCredentials(w io.Writer) {
	if len(imp.creds) == 0 {
		return
	}
	fmt.Fprintf(w, "\nCredentials left on the host (never copied into the outer folder):\n")
	var refs []credNote
	for _, c := range imp.creds {
		fate := "not copied (nor the file)"
		if c.Ref != "" {
			fate = "written as " + c.Ref
			refs = append(refs, c)
		}
		fmt.Fprintf(w, "  %s %s: %s; %s\n", c.File, c.Where, c.Why, fate)
	}
	if len(refs) == 0 {
		return
	}
	fmt.Fprintf(w, "\nGive the VM each one (the value goes to secrets.env, the VM sees a placeholder):\n")
	for _, c := range refs {
		if c.Host != "" {
			fmt.Fprintf(w, "  asb secret add %s --allow %s\n", c.Name, c.Host)
			continue
		}
		fmt.Fprintf(w, "  asb secret add %s --allow HOST   # HOST: where %s sends it\n", c.Name, imp.agent)
	}
}
