// Package trustcmd is `asb trust`: approve what an outer folder would run.
package trustcmd

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/runner"
)

// Options are the parsed command line of `asb trust`.
type Options struct {
	Factory *cmdutil.Factory
	Dir     string
	Show    bool
	Revoke  bool
	Git     runner.Git
}

// NewCmd returns `asb trust`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "trust [--show | --revoke]",
		Short: "Approve what this outer folder runs and grants: its answers, Taskfile, configs, image, agent config",
		Long: `A cloned outer folder is input from whoever can push to its repository. asb
task and asb sync run nothing of it (no task, no msb create, no image build,
no clone) until you have approved it: its answers and workspace origin
(asb.yaml, not the asb version line), Taskfile.yml, sandbox.yaml,
secrets.yaml and the other files at its top (not secrets.env, README.md,
.gitignore, nor an untracked file .gitignore ignores that nothing reads),
everything under toolchain/, and the agent's config folder.

asb trust shows what the folder would grant the agent (network and hosts,
each secret and where it may go, mounts, ports, images, agents, limits) and,
when you approved an earlier version, what widened and what narrowed since,
then the files that differ, each labelled rendered by asb, edited or added
(with a diff for what is not asb's render); then it approves this content,
for this folder only. The folder asb init made, an asb update that keeps the
answers, and asb's own edits (secret add, network allow, agent add, …) stay
approved; a pull that changes anything needs asb trust again.

A policy (/etc/asb/policy.yaml, the administrator's, and
~/.config/asb/policy.yaml, yours) says what no folder may ask for: a folder
that asks for more is refused, and asb trust cannot approve it.

Approvals are kept in your state folder ($XDG_STATE_HOME/asb/trust, by default
~/.local/state/asb/trust), never in the repository, so no commit can approve
itself. --show approves nothing; --revoke forgets this folder's approvals.
docs/trust.md tells the whole model.`,
		Example: `  git pull && asb trust --show    # what it grants now, and what widened
  asb trust                       # approve it
  asb task agent`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return Run(cmd.Context(), opts) },
	}
	cmdutil.AddDirFlag(cmd, &opts.Dir)
	cmd.Flags().BoolVar(&opts.Show, "show", false, "print what the folder grants, what changed since you approved it, and whether it is approved; approve nothing")
	cmd.Flags().BoolVar(&opts.Revoke, "revoke", false, "forget every approval of this folder: asb task runs nothing of it until asb trust")
	cmd.MarkFlagsMutuallyExclusive("show", "revoke")
	return cmd
}

// Run shows the folder's verdict and what it grants, then approves it.
func Run(ctx context.Context, o *Options) error {
	dir, err := cmdutil.FolderDir(o.Factory.Getwd, o.Dir)
	if err != nil {
		return err
	}
	w := o.Factory.IO.Out
	j := cmdutil.Judge(o.Factory)
	if o.Revoke {
		return revoke(w, j, dir)
	}
	v, err := j.Check(dir)
	if err != nil {
		return err
	}
	switch {
	case len(v.Refused) > 0:
		return &outer.PolicyRefusedError{Dir: dir, Problems: v.Refused}
	case v.Trusted:
		if o.Show {
			if err := showGrants(w, v, o.Factory); err != nil {
				return err
			}
		}
		fmt.Fprintf(w, "trusted: %s\n", v.Why)
		return nil
	}
	fmt.Fprintf(w, "%s is not approved: %s.\n\n", dir, v.Why)
	if err := v.Explain(ctx, w, o.Git); err != nil {
		return err
	}
	if o.Show {
		fmt.Fprintf(w, "\nnot approved: %s\nasb trust approves this content (asb task runs nothing until then).\n", v.Why)
		return nil
	}
	if err := v.Approve("asb trust"); err != nil {
		return err
	}
	fmt.Fprintf(w, "\napproved: %s as it is now (%d files and its answers, content %s); a change to any of them needs asb trust again\n", dir, v.Set.Count(), v.Set.Hash()[:12])
	return nil
}

// showGrants prints what a trusted folder grants.
func showGrants(w io.Writer, v *outer.Verdict, f *cmdutil.Factory) error {
	fo, err := cmdutil.OpenFolder(f, v.Dir)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "What it grants the agent (asb boundary shows it in full):")
	outer.GrantsOf(fo).Print(w)
	fmt.Fprintln(w)
	return nil
}

func revoke(w io.Writer, j outer.Judge, dir string) error {
	store, err := outer.ApprovalStore(j.Getenv)
	if err != nil {
		return err
	}
	had, err := store.Revoke(dir)
	if err != nil {
		return fmt.Errorf("forget the approvals: %w", err)
	}
	if !had {
		fmt.Fprintf(w, "%s had no approval on this machine\n", dir)
		return nil
	}
	fmt.Fprintf(w, "revoked: asb runs nothing of %s until asb trust approves it again\n", dir)
	return nil
}
