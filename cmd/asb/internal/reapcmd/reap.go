// Package reapcmd is `asb reap-boot`, which the Taskfile's vm:create and
// vm:start defer: it ends a boot that did not finish.
package reapcmd

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/runner"
)

// Options are the parsed command line of `asb reap-boot`.
type Options struct {
	IO         *cmdutil.IOStreams
	MSB        runner.MSB
	VM         string
	Remove     bool
	Unfinished bool
	Grace      time.Duration
}

// NewCmd returns `asb reap-boot`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{IO: f.IO, MSB: runner.MSB{Getenv: f.Getenv}, Grace: 3 * time.Second}
	cmd := &cobra.Command{
		Use:    "reap-boot [--remove [--unfinished]] VM",
		Short:  "End a boot of VM that did not finish (the Taskfile runs this)",
		Hidden: true,
		Long: `End a boot of VM that did not finish. vm:create and vm:start run this
whenever they end, however they end: when msb still says the VM is
Starting (the boot was interrupted by Ctrl-C, or asb was stopped), its
msb machine process is ended, and with --remove the half-made VM is
removed too, so the next run creates it again. A VM that runs, is
stopped, or does not exist is left alone.

msb runs each VM in a process of its own session, which a Ctrl-C in the
terminal does not reach; msb's own stop and remove wait for a boot to end,
which on a host without CPU virtualization takes minutes.

--unfinished says that VM is what this run's msb create made, and the
create did not finish if msb does not say Running: a create that failed or
was interrupted leaves a Stopped record, which --remove then removes too
(the Taskfile's status would take it for made).`,
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.VM = args[0]
			return Run(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Remove, "remove", false, "also remove the VM whose boot did not finish")
	cmd.Flags().BoolVar(&opts.Unfinished, "unfinished", false, "VM is this run's create's: with --remove, remove it too when it is not running")
	return cmd
}

// Run ends the boot.
func Run(ctx context.Context, o *Options) error {
	if err := o.MSB.ReapBoot(ctx, o.VM, o.Remove, o.Unfinished, o.Grace, o.IO.ErrOut); err != nil {
		return fmt.Errorf("end the boot of %s: %w", o.VM, err)
	}
	return nil
}
