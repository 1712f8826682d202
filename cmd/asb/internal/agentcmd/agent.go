// Package agentcmd is `asb agent add`: another agent in the same VM.
package agentcmd

import (
	"context"
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/runner"
	"github.com/agents-sandbox/asb/schema"
)

// Options are the parsed command line of `asb agent add`.
type Options struct {
	Factory *cmdutil.Factory
	Dir     string
	Name    string
	DryRun  bool
	Git     runner.Git
}

// NewCmd returns `asb agent`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "agent <command>",
		Short: "Add another agent to this outer folder's VM",
		Args:  cmdutil.NoArgs,
		RunE:  cmdutil.NeedSubcommand,
	}
	cmdutil.AddDirFlag(cmd, &opts.Dir)
	add := &cobra.Command{
		Use:   "add AGENT [--dry-run]",
		Short: "Add AGENT (a preset: asb agents) to the same VM, keeping your edits",
		Long: `Add another agent preset to this outer folder: its config folder (mounted
read-only at its own target), its key in secrets.yaml (and a commented line in
secrets.env), its hosts in the allow list, its package in the toolchain image,
and a task agent:AGENT that starts it in the same VM (the home volume is
shared). asb task agent still starts the folder's first agent.

The files change the way asb update changes them: the templates are rendered
with the recorded answers plus AGENT and merged three ways into your files, so
your edits stay; where you changed the same lines, the file gets conflict
markers and the command exits non-zero. --dry-run prints the diff.`,
		Example: `  asb agent add codex
  $EDITOR secrets.env          # OPENAI_API_KEY=...
  asb task agent:codex`,
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			return runAdd(cmd.Context(), opts)
		},
	}
	add.Flags().BoolVar(&opts.DryRun, "dry-run", false, "print what would change, as a diff; write nothing")
	cmd.AddCommand(add)
	return cmd
}

func runAdd(ctx context.Context, o *Options) error {
	agent, err := generator.LoadAgent(o.Factory.Templates, o.Name)
	if err != nil {
		return err
	}
	dir, err := cmdutil.FolderDir(o.Factory.Getwd, o.Dir)
	if err != nil {
		return err
	}
	lock, err := runner.LockFolder(ctx, dir, "asb agent add", o.Factory.IO.ErrOut)
	if err != nil {
		return err
	}
	defer lock.Release()
	cmdutil.CleanStaging(dir, o.Factory.IO.ErrOut)
	if !o.DryRun {
		defer cmdutil.KeepApproval(o.Factory, dir)()
	}
	u, err := outer.PlanChange(ctx, dir, o.Factory.Templates, o.Factory.Version, o.Git, func(a *schema.InitOptions) error {
		if a.Agent == o.Name || slices.Contains(a.Also, o.Name) {
			return fmt.Errorf("%s is in this outer folder already (asb task agent:%s starts it)", o.Name, o.Name)
		}
		a.Also = append(a.Also, o.Name)
		return nil
	})
	if err != nil {
		return err
	}
	// The policy in force, at this door too: the new agent's hosts and key.
	if probs, err := u.PolicyIntroduced(cmdutil.Judge(o.Factory)); err != nil || len(probs) > 0 {
		if err == nil {
			err = &outer.PolicyRefusedError{Dir: dir, Problems: probs}
		}
		return err
	}
	w := o.Factory.IO.Out
	if err := u.Print(ctx, w, o.Git, o.DryRun); err != nil {
		return err
	}
	if o.DryRun {
		fmt.Fprintln(w, "\n(dry run: nothing was written)")
		return nil
	}
	if err := u.Apply(); err != nil {
		return err
	}
	if err := envLine(dir, o.Factory); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nAdded %s %s. Next:\n  $EDITOR secrets.env      # set %s (or export it)\n  asb task agent:%s\n",
		agent.Name, agent.Version, agent.KeyVar, agent.Name)
	if c := u.Conflicts(); len(c) > 0 {
		return &outer.ConflictError{Files: c}
	}
	return nil
}

// envLine gives secrets.env a commented line for the new key.
func envLine(dir string, f *cmdutil.Factory) error {
	fo, err := outer.Open(dir, outer.Options{Getenv: f.Getenv, Agents: cmdutil.Agents(f)})
	if err != nil {
		return err
	}
	fo.EnsureEnvLines()
	_, err = fo.Commit()
	return err
}
