// Package boundarycmd is `asb boundary`: one screen of what the agent in the
// VM can reach (outer.Boundary).
package boundarycmd

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/outer"
)

// Options are the parsed command line of `asb boundary`.
type Options struct {
	Factory *cmdutil.Factory
	Dir     string
	Format  string
	Session string // a session's VM (asb session new) instead of the folder's
}

// NewCmd returns `asb boundary`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "boundary [--format json]",
		Short: "Show what the agent in the VM can reach: files, network, ports, secrets",
		Long: `Show, on one screen, everything the agent inside the VM can reach, as
sandbox.yaml, secrets.yaml and the Taskfile set it up:

  files     each mount (read-write or read-only), the persistent home volume
            at /home/dev, and the agent's config folder, which is a read-only
            bind of this folder's copy (your host's own agent config is never
            copied into the VM)
  network   the egress policy and the allowed and denied hosts
  ports     the host ports forwarded into the VM
  secrets   each credential by name, with the hosts it is sent to and whether
            the host has a value; never the value

Nothing is written and no VM is needed. Change the boundary with asb mount,
asb network, asb port and asb secret; check it with asb validate.`,
		Example: `  # In an outer folder (or any folder below it)
  asb boundary

  # The same as JSON, for scripts
  asb boundary --format json -d myproj`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return Run(opts)
		},
	}
	cmdutil.AddDirFlag(cmd, &opts.Dir)
	cmd.Flags().StringVar(&opts.Format, "format", "text", "output format: text or json")
	cmd.Flags().StringVar(&opts.Session, "session", "", "the boundary of session NAME's VM (its derived config: its checkout at /workspace, its own host ports)")
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// Run prints the boundary.
func Run(o *Options) error {
	if o.Format != "text" && o.Format != "json" {
		return &cmdutil.UsageError{Err: fmt.Errorf("--format %q: use text or json", o.Format)}
	}
	f, err := cmdutil.OpenFolder(o.Factory, o.Dir)
	if err != nil {
		return err
	}
	if o.Session != "" {
		s, err := outer.FindSession(f.Dir, o.Session)
		if err != nil {
			return cmdutil.InputError(err)
		}
		if err := f.ForSession(s); err != nil {
			return err
		}
	}
	b := f.Summarize()
	appr := approval(o.Factory, f.Dir)
	if o.Format == "json" {
		enc := json.NewEncoder(o.Factory.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			*outer.Boundary
			Approval Approval `json:"approval"`
		}{b, appr})
	}
	b.Print(o.Factory.IO.Out)
	w := o.Factory.IO.Out
	if appr.Trusted {
		fmt.Fprintf(w, "\nApproval: asb task runs this folder: %s.\n", appr.Why)
	} else {
		fmt.Fprintf(w, "\nApproval: not approved: %s. asb task runs nothing of it (not its Taskfile, configs or image) until asb trust; asb trust --show shows how it differs from asb's render.\n", appr.Why)
	}
	return nil
}

// Approval is whether asb task runs the folder as it is (outer.CheckTrust).
type Approval struct {
	Trusted bool   `json:"trusted"`
	Why     string `json:"why"`
}

func approval(f *cmdutil.Factory, dir string) Approval {
	v, err := outer.CheckTrust(dir, f.Templates, f.Getenv)
	if err != nil {
		return Approval{Why: err.Error()}
	}
	return Approval{Trusted: v.Trusted, Why: v.Why}
}
