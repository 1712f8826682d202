// Package exportcmd is `asb export kubernetes`: it resolves the outer folder
// and hands it, with the flags, to asb-export (runner.FindExport), which
// renders agent-sandbox resources from Kubernetes' Go types. asb itself
// links none of them.
package exportcmd

import (
	"context"
	"errors"
	"fmt"
	"os/exec"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/internal/proc"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/runner"
)

// Options are the parsed command line of `asb export kubernetes`.
type Options struct {
	Factory      *cmdutil.Factory
	Dir          string
	RuntimeClass string
	Image        string
	Output       string
	Sessions     []string
	Egress       string
	StorageClass string
	Apply        bool
}

// NewCmd returns `asb export` with its one target, kubernetes.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "export kubernetes",
		Short: "Render the outer folder for another place to run it (kubernetes)",
		Args:  cmdutil.NoArgs,
		RunE:  cmdutil.NeedSubcommand,
	}
	cmd.AddCommand(newKubernetesCmd(f))
	return cmd
}

func newKubernetesCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "kubernetes [--runtime-class kata|gvisor|NAME|none] [--image REF] [--egress cilium|none] [--storage-class NAME] [-o DIR | --apply] [--session NAME ...]",
		Short: "Render the folder as Kubernetes agent-sandbox resources (SandboxTemplate, a SandboxClaim per session)",
		Long: `Render the outer folder as resources of Kubernetes' agent-sandbox
(sigs.k8s.io/agent-sandbox): a SandboxTemplate (the toolchain image, the
CPUs, memory and root disk of the folder, dev as the user, the agent's
config read-only from a ConfigMap, /tmp in memory of tmp-size, /home/dev and
/workspace on volume claims, the workspace of the workspace quota), a
SandboxWarmPool with no spares, a SandboxClaim per --session (one named after
the folder without), the egress policy (a NetworkPolicy, and with
--egress cilium the allow list as a CiliumNetworkPolicy with toFQDNs and DNS
for those names only) and each secret as a reference to a key of the Secret
NAME-secrets, which you create: no value is ever written. The pod reaches no
git host: asb kube agent delivers the workspace.

Without -o the resources go to standard output as one stream for
kubectl apply -f -; with -o DIR one file each, numbered in apply order, and
NOTES.txt; with --apply they are applied to the cluster of your kubeconfig
(server-side apply), after checking it serves every kind. The notes (on
standard error) say what is not enforced on the cluster and what the export
assumes; asb boundary --target kubernetes says what differs from the VM.
See docs/kubernetes.md.
`,
		Example: `  # Push the toolchain image first, then:
  asb export kubernetes --image registry.example.com/team/demo:opencode -o k8s/
  kubectl create secret generic demo-secrets --from-env-file=secrets.env
  kubectl apply -f k8s/

  # Two sessions, Kata Containers (a microVM per pod), applied to your cluster
  asb export kubernetes --runtime-class kata --session fix-login --session docs --apply
  asb kube agent --session fix-login`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return Run(cmd.Context(), opts)
		},
	}
	cmdutil.AddDirFlag(cmd, &opts.Dir)
	fl := cmd.Flags()
	fl.StringVar(&opts.RuntimeClass, "runtime-class", "gvisor", "the pods' RuntimeClass: gvisor, kata, another of your cluster, or none (a plain container on the node's kernel)")
	fl.StringVar(&opts.Image, "image", "", "the toolchain image as pushed to your registry (default: sandbox.yaml's local tag)")
	fl.StringVarP(&opts.Output, "output", "o", "", "write one file per resource into this folder (default: standard output)")
	fl.StringArrayVar(&opts.Sessions, "session", nil, "a session: one SandboxClaim (and pod) each; repeat for more (default: every session of the folder, asb session ls)")
	fl.StringVar(&opts.Egress, "egress", "cilium", "how the allow list is enforced: cilium (a CiliumNetworkPolicy) or none (no CNI policy: the list is not enforced, the pod reaches DNS only)")
	fl.StringVar(&opts.StorageClass, "storage-class", "", "the volume claims' StorageClass (default: the cluster's default)")
	fl.BoolVar(&opts.Apply, "apply", false, "apply the resources to the cluster of your kubeconfig (server-side apply) instead of printing them")
	cmd.MarkFlagsMutuallyExclusive("apply", "output")
	return cmd
}

// Run finds the folder and the exporter and runs it.
func Run(ctx context.Context, o *Options) error {
	if ctx == nil {
		ctx = context.Background()
	}
	f := o.Factory
	dir, err := cmdutil.FolderDir(f.Getwd, o.Dir)
	if err != nil {
		return err
	}
	exe, err := runner.FindExport(f.Getenv, f.Executable)
	if err != nil {
		return err
	}
	args := []string{"--dir", dir, "--runtime-class", o.RuntimeClass, "--image", o.Image, "--egress", o.Egress, "--storage-class", o.StorageClass}
	if o.Output != "" {
		args = append(args, "--output", o.Output)
	}
	if o.Apply {
		args = append(args, "--apply")
	}
	sessions, err := sessionNames(dir, o.Sessions)
	if err != nil {
		return err
	}
	for _, s := range sessions {
		args = append(args, "--session", s)
	}
	keep := func() {}
	if o.Output != "" {
		// -o k8s/ writes into the outer folder, where, without a record
		// of what git tracks, every file below the top counts: asb's own
		// write keeps an approved folder approved (docs/trust.md).
		keep = cmdutil.KeepApproval(f, dir)
	}
	cmd := proc.Command(ctx, exe, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, f.IO.Out, f.IO.ErrOut
	if wd, err := f.Getwd(); err == nil {
		cmd.Dir = wd // -o DIR is relative to where asb runs
	}
	err = cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() > 0 {
		return &cmdutil.SilentError{Code: ee.ExitCode()} // it said why
	}
	if err != nil {
		return fmt.Errorf("run %s: %w", exe, err)
	}
	keep()
	return nil
}

// sessionNames are the sessions to export: those named by --session, or
// else every session of the folder (asb session new), one claim each.
func sessionNames(dir string, named []string) ([]string, error) {
	if len(named) > 0 {
		return named, nil
	}
	all, err := outer.Sessions(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(all))
	for _, s := range all {
		names = append(names, s.Name)
	}
	return names, nil
}
