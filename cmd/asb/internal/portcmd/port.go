// Package portcmd is `asb port`: host ports forwarded into the VM.
package portcmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/schema"
)

// Options are the parsed command line of `asb port`.
type Options struct {
	Factory *cmdutil.Factory
	Dir     string
	Spec    string
}

// NewCmd returns `asb port` and its subcommands.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "port <command>",
		Short: "Forward host ports into the VM",
		Long: `Change ports in sandbox.yaml: the host ports forwarded to ports of the VM,
e.g. to open the agent's dev server in your browser. msb binds them to
127.0.0.1 unless the entry names another address (BIND:HOST:GUEST).
Comments and layout of sandbox.yaml are kept; the edit is checked like
asb validate before it is written.`,
		Example: `  asb port add 5173:5173
  asb port ls
  asb port rm 5173`,
		Args: cmdutil.NoArgs,
		RunE: cmdutil.NeedSubcommand,
	}
	cmdutil.AddDirFlag(cmd, &opts.Dir)
	cmd.AddCommand(&cobra.Command{
		Use:   "add [BIND:]HOST:GUEST[/tcp|/udp]",
		Short: "Forward host port HOST to guest port GUEST",
		Long: `Forward host port HOST to port GUEST of the VM (tcp unless /udp is given),
bound to 127.0.0.1 unless BIND names another IPv4 address. A host port
that is forwarded already is refused: remove it first with asb port rm.`,
		Example: `  asb port add 5173:5173
  asb port add 8080:80
  asb port add 9000:9000/udp`,
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Spec = args[0]
			return runAdd(cmd.Context(), opts)
		},
	})
	cmd.AddCommand(cmdutil.ShowCommand(opts.Factory, &opts.Dir, "ls", []string{"list"},
		"List the forwarded ports", (*outer.Boundary).PrintPorts))
	cmd.AddCommand(&cobra.Command{
		Use:     "rm HOST:GUEST|HOST",
		Aliases: []string{"remove"},
		Short:   "Stop forwarding a port",
		Long: `Stop forwarding a port: give the entry (HOST:GUEST, as asb port ls shows
it) or only the host port, which removes every entry for it.`,
		Example: `  asb port rm 5173:5173
  asb port rm 5173`,
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Spec = args[0]
			return runRm(cmd.Context(), opts)
		},
	})
	return cmd
}

func runAdd(ctx context.Context, o *Options) error {
	f, release, err := cmdutil.EditFolder(ctx, o.Factory, o.Dir, "asb port add")
	if err != nil {
		return err
	}
	defer release()
	p, warns, err := f.AddPort(o.Spec)
	if err != nil {
		return cmdutil.InputError(err)
	}
	cmdutil.PrintWarnings(o.Factory.IO.ErrOut, warns)
	w := o.Factory.IO.Out
	fmt.Fprintf(w, "added to ports: %s\n", p.String())
	if note := schema.PortExposure(p); note != "" {
		fmt.Fprintf(w, "note: %s\n", note)
	}
	fmt.Fprintln(w, "a running VM keeps its old ports until it is created again (asb task vm:create)")
	fmt.Fprintln(w)
	f.Summarize().PrintPorts(w)
	return nil
}

func runRm(ctx context.Context, o *Options) error {
	match, err := outer.PortMatcher(o.Spec)
	if err != nil {
		return &cmdutil.UsageError{Err: err}
	}
	f, release, err := cmdutil.EditFolder(ctx, o.Factory, o.Dir, "asb port rm")
	if err != nil {
		return err
	}
	defer release()
	removed, warns, err := f.RemovePorts(o.Spec, match)
	if err != nil {
		return err
	}
	cmdutil.PrintWarnings(o.Factory.IO.ErrOut, warns)
	w := o.Factory.IO.Out
	fmt.Fprintf(w, "removed from ports: %s\n\n", strings.Join(removed, ", "))
	f.Summarize().PrintPorts(w)
	return nil
}
