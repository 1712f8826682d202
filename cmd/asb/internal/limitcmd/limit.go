// Package limitcmd is `asb limit`: the VM's idle stop and disk sizes.
package limitcmd

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/schema"
)

// Options are the parsed command line of `asb limit`.
type Options struct {
	Factory     *cmdutil.Factory
	Dir         string
	Name, Value string
}

// NewCmd returns `asb limit` and its subcommands.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "limit <command>",
		Short: "Set the VM's idle stop and disk sizes",
		Long: `Change the VM's limits, each where msb reads it:

  idle-timeout     sandbox.yaml idle_timeout: stop the VM after this long
                   with no client attached (default ` + schema.DefaultIdleTimeout + `); msb never stops it
                   while a session (asb task agent, vm:shell) is open
  max-duration     sandbox.yaml max_duration: stop it this long after it
                   started, even with a client attached (default none)
  root-disk        Taskfile.yml ROOT_DISK (msb create --root-disk)
  tmp-size         sandbox.yaml: /tmp as a tmpfs of this size (in memory)
  workspace-quota  sandbox.yaml: quota= of the workspace mount
  container-disk   Taskfile.yml CONTAINER_DISK: the disk for containers

Durations are whole seconds, minutes or hours (90s, 30m, 12h); sizes take
M or G (512M, 16G). "none" unsets a limit (root-disk and container-disk go
back to asb's defaults, ` + schema.DefaultRootDisk + ` and ` + schema.DefaultContainerDisk + `). A running VM keeps its old limits until
it is created again (asb task vm:create does that when the files change).`,
		Example: `  asb limit set idle-timeout 2h
  asb limit set root-disk 16G
  asb limit set workspace-quota 20G
  asb limit set tmp-size none
  asb limit ls`,
		Args: cmdutil.NoArgs,
		RunE: cmdutil.NeedSubcommand,
	}
	cmdutil.AddDirFlag(cmd, &opts.Dir)
	cmd.AddCommand(&cobra.Command{
		Use:       "set NAME VALUE|none",
		Short:     "Set one limit (none unsets it)",
		Args:      cmdutil.ExactArgs(2),
		ValidArgs: schema.LimitNames(),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name, opts.Value = args[0], args[1]
			return runSet(cmd.Context(), opts)
		},
	})
	cmd.AddCommand(cmdutil.ShowCommand(opts.Factory, &opts.Dir, "ls", []string{"list"},
		"List the limits", func(b *outer.Boundary, w io.Writer) { outer.PrintLimits(w, b.Limits) }))
	return cmd
}

func runSet(ctx context.Context, o *Options) error {
	if _, re := schema.LookupLimit(o.Name); re != nil {
		return &cmdutil.UsageError{Err: schema.RuleField("limit", re)}
	}
	f, release, err := cmdutil.EditFolder(ctx, o.Factory, o.Dir, "asb limit set")
	if err != nil {
		return err
	}
	defer release()
	warns, err := f.SetLimit(o.Name, strings.TrimSpace(o.Value))
	if err != nil {
		return cmdutil.InputError(err)
	}
	cmdutil.PrintWarnings(o.Factory.IO.ErrOut, warns)
	w := o.Factory.IO.Out
	fmt.Fprintf(w, "set %s to %s\n", o.Name, o.Value)
	fmt.Fprintln(w, "a running VM keeps its old limits until it is created again (asb task vm:create)")
	fmt.Fprintln(w)
	outer.PrintLimits(w, f.Summarize().Limits)
	return nil
}
