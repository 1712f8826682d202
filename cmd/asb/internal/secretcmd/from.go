package secretcmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/internal/proc"
	"github.com/agents-sandbox/asb/runner"
	"github.com/agents-sandbox/asb/schema"
)

// recordFrom keeps NAME's command in the user's store (never in the
// folder) and says where.
func recordFrom(o *Options, dir string) error {
	store, err := runner.SecretCommandStore(o.Factory.Getenv)
	if err != nil {
		return err
	}
	if err := store.Set(dir, o.Name, o.From); err != nil {
		return err
	}
	fmt.Fprintf(o.Factory.IO.Out, "the value of %s comes from the command %q, run on this host when the VM is created or started; the command is kept on this host only (%s), not in the folder\n",
		o.Name, o.From, store.File(dir))
	if why := runner.MissingProgram(o.From, dir, o.Factory.Getenv); why != "" {
		fmt.Fprintf(o.Factory.IO.ErrOut, "warning: the command of %s cannot run here yet: %s; vm:create would fail until it can (asb validate checks it again)\n", o.Name, why)
	}
	return nil
}

// forgetFrom removes NAME's command, if it has one.
func forgetFrom(o *Options, dir string) error {
	store, err := runner.SecretCommandStore(o.Factory.Getenv)
	if err != nil {
		return nil //nolint:nilerr // no store: no command to forget
	}
	return store.Set(dir, o.Name, "")
}

// newExecCmd is `asb secret exec -- COMMAND…`, which vm:create and
// vm:start run msb through: the secrets' recorded commands run on the host,
// and their values reach msb in its environment, never in an argument,
// a file or the output.
func newExecCmd(opts *Options) *cobra.Command {
	return &cobra.Command{
		Use:    "exec -- COMMAND [ARG…]",
		Short:  "Run COMMAND with the values of the secrets' commands in its environment (the Taskfile runs msb so)",
		Hidden: true,
		Args:   cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runExec(cmd.Context(), opts, args)
		},
	}
}

func runExec(ctx context.Context, o *Options, argv []string) error {
	if filepath.Base(argv[0]) != "msb" {
		// The values go to msb, which keeps them out of the VM, and to
		// nothing else: not even an approved Taskfile gets them into
		// another program this way.
		return &cmdutil.UsageError{Err: fmt.Errorf("asb secret exec runs msb only, not %q: the values of the secrets' commands go to msb and nothing else", argv[0])}
	}
	dir, err := cmdutil.FolderDir(o.Factory.Getwd, o.Dir)
	if err != nil {
		return err
	}
	if err := schema.SecretsEnvTracked(ctx, dir); err != nil {
		return err
	}
	env := os.Environ()
	// The secrets' values, and nothing else of secrets.env: the Taskfile
	// has no dotenv, so no other variable of that file reaches msb or any
	// other command (an LD_PRELOAD there would run in every one of them).
	vals, err := runner.SecretValues(ctx, dir, o.Factory.Getenv, o.Factory.IO.ErrOut)
	if err != nil {
		return err
	}
	for k, v := range vals {
		if v != "" {
			env = setEnv(env, k, v)
		}
	}
	if o.Factory.Exec != nil {
		if err := o.Factory.Exec(argv, env, dir); err != nil {
			return fmt.Errorf("%s: %w", argv[0], err)
		}
	}
	c := proc.Command(ctx, argv[0], argv[1:]...)
	c.Env, c.Dir = env, dir
	c.Stdin, c.Stdout, c.Stderr = o.Factory.IO.In, o.Factory.IO.Out, o.Factory.IO.ErrOut
	err = c.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return &cmdutil.SilentError{Code: ee.ExitCode()}
	}
	return err
}

// setEnv returns env with NAME=value in place of any NAME= entry.
func setEnv(env []string, name, value string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return append(out, name+"="+value)
}

// checkFrom is the rule on a --from command: one line that runs something.
func checkFrom(s string) error {
	if strings.TrimSpace(s) == "" || strings.ContainsAny(s, "\n\r\x00") {
		return schema.RuleField("--from", &schema.RuleError{Value: s, Why: "is not a one-line command",
			Fix: "give the command that prints the value, e.g. --from 'gh auth token' or --from 'op read op://Private/GitHub/token'"})
	}
	return nil
}
