// Package kubecmd is `asb kube`: the folder's sessions on a Kubernetes
// cluster, where asb export kubernetes --apply put it. Like exportcmd it
// resolves the folder and runs asb-export (runner.FindExport), which links
// client-go; asb itself links no Kubernetes package.
package kubecmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/internal/proc"
	"github.com/agents-sandbox/asb/internal/termtext"
	"github.com/agents-sandbox/asb/runner"
	"github.com/agents-sandbox/asb/schema"
)

// Options are the parsed command line of `asb kube agent`.
type Options struct {
	Factory *cmdutil.Factory
	Dir     string
	Session string
}

// NewCmd returns `asb kube` with its command, agent.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "kube agent [--session NAME]",
		Short: "Run the folder's agent on Kubernetes, where asb export kubernetes --apply put it",
		Args:  cmdutil.NoArgs,
		RunE:  cmdutil.NeedSubcommand,
	}
	cmd.AddCommand(newAgentCmd(f))
	return cmd
}

func newAgentCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "agent [--session NAME]",
		Short: "Claim the session's sandbox on the cluster, wait for it, and run the agent there on this terminal",
		Long: `Run the agent of the folder (or of a session) in its sandbox on the
cluster of your kubeconfig, in the namespace of its context: the
SandboxClaim NAME (NAME-SESSION with --session) is made when it does not
exist yet (its template and pool must: asb export kubernetes --apply), asb
waits for its pod, delivers the workspace when the pod waits for it (a
clone of asb.yaml's recorded origin made on this machine with your
credentials, streamed in as a git bundle: the pod reaches no git host),
and runs the agent's command in the pod by the API's exec, on this
terminal, as asb task agent runs it in the VM. Leaving the agent leaves the
pod and its volumes; asb kube agent again runs another agent in it.
See docs/kubernetes.md.`,
		Example: `  asb export kubernetes --image registry.example.com/team/demo:opencode --apply
  asb kube agent
  asb kube agent --session fix-login`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return Run(cmd.Context(), opts)
		},
	}
	cmdutil.AddDirFlag(cmd, &opts.Dir)
	cmd.Flags().StringVar(&opts.Session, "session", "", "the session (its own claim, pod, volumes and branch asb/NAME); default: the folder's own")
	return cmd
}

// Run finds the folder and the exporter and runs the agent through it,
// on this process's own terminal.
func Run(ctx context.Context, o *Options) error {
	if ctx == nil {
		ctx = context.Background()
	}
	f := o.Factory
	if o.Session != "" {
		if re := schema.SessionName(o.Session); re != nil {
			return schema.RuleField("--session", re)
		}
	}
	dir, err := cmdutil.FolderDir(f.Getwd, o.Dir)
	if err != nil {
		return err
	}
	exe, err := runner.FindExport(f.Getenv, f.Executable)
	if err != nil {
		return err
	}
	args := []string{"kube-agent", "--dir", dir}
	if o.Session != "" {
		args = append(args, "--session", o.Session)
	}
	cmd := proc.Graceful(ctx, exe, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = f.IO.In, agentOut(f.IO), f.IO.ErrOut
	err = cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() > 0 {
		return &cmdutil.SilentError{Code: ee.ExitCode()} // it said why, or the agent's own exit code
	}
	if err != nil {
		return fmt.Errorf("run %s: %w", exe, err)
	}
	return nil
}

// agentOut is where the agent's output goes. On a terminal the exporter
// attaches the agent to it (raw, a TTY in the pod), as asb task agent
// gives msb exec -t the terminal: the agent's interface draws with escape
// sequences, and the printer would show them as ^[ (docs/vm-repositories.md,
// "What reaches your terminal": the raw channels are the ones the user
// gives the agent). Anything else (a pipe, a file) goes through the
// printer, as every command's output does.
func agentOut(s *cmdutil.IOStreams) io.Writer {
	if cmdutil.IsTerminal(s.In) {
		return termtext.Raw(s.Out)
	}
	return s.Out
}
