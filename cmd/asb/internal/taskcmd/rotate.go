package taskcmd

import (
	"bufio"
	"context"
	"fmt"
	"slices"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/runner"
)

// attaching are the tasks that attach to the running VM: before one runs,
// a VM started with other secret values is restarted, so the new values
// reach it.
var attaching = []string{"agent", "vm:shell", "vm:exec"}

// rotateSecrets restarts the VM when the values of its secrets (from the
// environment or secrets.env) changed since it started: msb reads them when
// a VM starts. With a session attached it asks first (--yes does not ask);
// declined, the VM keeps the old values and asb says so. unchanged reports
// that the values are those the VM started with (or that none was
// compared: the run attaches to nothing).
func rotateSecrets(ctx context.Context, o *Options, dir, vm string) (unchanged bool, err error) {
	if !slices.ContainsFunc(o.Tasks, func(t string) bool { return slices.Contains(attaching, t) }) {
		return true, nil
	}
	changed, err := runner.SecretsChanged(dir, vm, o.Getenv)
	if err != nil || !changed {
		return !changed, err
	}
	msb := runner.MSB{Getenv: o.Getenv}
	if st, err := msb.Status(ctx, vm); err != nil || st != "Running" {
		return false, err // it gets the new values when it starts
	}
	if n := msb.Sessions(vm); n > 0 && !o.Yes && !confirm(o, fmt.Sprintf(
		"asb: the secrets changed since %s started; restarting it ends the %d session(s) attached to it. Restart now? [y/N] ", vm, n)) {
		fmt.Fprintf(o.IO.ErrOut, "asb: %s keeps the old values until it restarts (asb task vm:stop, then asb task agent)\n", vm)
		return false, nil
	}
	fmt.Fprintf(o.IO.ErrOut, "asb: the secrets changed since %s started: restarting it, so that they reach it\n", vm)
	if err := msb.Stop(ctx, vm); err != nil {
		return false, fmt.Errorf("restart %s for its new secrets: %w (a VM that does not stop: %s, then run again)", vm, err, runner.ForceStop(vm))
	}
	return false, nil
}

// confirm asks on the terminal; no answer (no terminal) is no.
func confirm(o *Options, question string) bool {
	yes, _ := cmdutil.Confirm(bufio.NewReader(o.IO.In), o.IO.ErrOut, question)
	return yes
}
