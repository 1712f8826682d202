// Package agentscmd is `asb agents`: the agent presets this asb knows.
package agentscmd

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/termtext"
)

// Options are the parsed command line of `asb agents`.
type Options struct {
	Factory *cmdutil.Factory
	JSON    bool
}

// NewCmd returns `asb agents`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "agents",
		Short: "List the agent presets: name, version, key variable, hosts",
		Long: `List the agent presets asb init --agent takes: the pinned version of each,
the variable its provider key goes in (secrets.env), and the hosts its VM may
reach. A preset is data under templates/agents/NAME/ (agent.yaml and its
config templates); adding one needs no Go code.`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return Run(opts) },
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the manifests as JSON")
	return cmd
}

// Run lists the presets.
func Run(o *Options) error {
	names, err := generator.Agents(o.Factory.Templates)
	if err != nil {
		return err
	}
	type row struct {
		Name        string   `json:"name"`
		Description string   `json:"description"`
		Version     string   `json:"version"`
		Package     string   `json:"package"`
		KeyVar      string   `json:"key_var"`
		Hosts       []string `json:"hosts"`
		ConfigDir   string   `json:"config_dir"`
		MountTarget string   `json:"mount_target"`
	}
	var rows []row
	for _, n := range names {
		a, err := generator.LoadAgent(o.Factory.Templates, n)
		if err != nil {
			return err
		}
		rows = append(rows, row{a.Name, a.Description, a.Version, a.NPMPackage, a.KeyVar, a.Hosts, a.ConfigDir, a.MountTarget})
	}
	if o.JSON {
		enc := json.NewEncoder(termtext.JSON(o.Factory.IO.Out))
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	w := tabwriter.NewWriter(o.Factory.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "AGENT\tVERSION\tKEY\tHOSTS\tDESCRIPTION")
	for _, r := range rows {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", r.Name, r.Version, r.KeyVar, strings.Join(r.Hosts, ","), r.Description)
	}
	return w.Flush()
}
