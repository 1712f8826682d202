// Package updatecmd is `asb update`: bring an outer folder up to this asb's
// templates, merging them into the user's edits.
package updatecmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/runner"
	"github.com/agents-sandbox/asb/schema"
)

// Options are the parsed command line of `asb update`.
type Options struct {
	Factory *cmdutil.Factory
	Dir     string
	DryRun  bool
	Git     runner.Git
}

// NewCmd returns `asb update`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "update [--dry-run]",
		Short: "Bring the outer folder up to this asb's templates, keeping your edits",
		Long: `Render this asb's templates with the answers recorded in asb.yaml, and merge
each file three ways (git merge-file): what asb wrote last (.asb-base/), your
file, and the new render. A file you did not edit takes the new template; your
edits and the template's changes are merged; where both changed the same
lines, the file gets standard conflict markers and asb update exits non-zero
with the list. Files the templates add are created; files they drop are
removed if you did not edit them, kept otherwise. secrets.env is never
touched. asb.yaml then records this asb and .asb-base/ the new bytes, so a
second asb update does nothing. --dry-run prints the diff and writes nothing.`,
		Example: `  asb update --dry-run
  asb update && asb validate && git commit -am "asb update"`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return Run(cmd.Context(), opts) },
	}
	cmdutil.AddDirFlag(cmd, &opts.Dir)
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "print what would change, as a diff; write nothing")
	return cmd
}

// Run plans the update, then prints it (dry run) or writes it.
func Run(ctx context.Context, o *Options) error {
	dir, err := cmdutil.FolderDir(o.Factory.Getwd, o.Dir)
	if err != nil {
		return err
	}
	lock, err := runner.LockFolder(ctx, dir, "asb update", o.Factory.IO.ErrOut)
	if err != nil {
		return err
	}
	defer lock.Release()
	cmdutil.CleanStaging(dir, o.Factory.IO.ErrOut)
	if !o.DryRun {
		defer cmdutil.KeepApproval(o.Factory, dir)()
	}
	u, err := outer.PlanUpdate(ctx, dir, o.Factory.Templates, o.Factory.Version, o.Git)
	if err != nil {
		return err
	}
	w := o.Factory.IO.Out
	if v, err := cmdutil.Judge(o.Factory).Check(dir); err == nil && !v.Trusted {
		// An update keeps your edits, and so keeps whatever a commit put
		// there: say so, rather than "nothing to update" alone.
		fmt.Fprintf(w, "Not approved: %s; asb trust --show shows how it differs, and asb task runs nothing until asb trust.\n\n", v.Why)
	}
	if len(u.Steps) == 0 {
		fmt.Fprintln(w, "Nothing to update: every file is what this asb's templates make (with your edits).")
		if u.Changed() && !o.DryRun {
			return u.Apply() // only the bases and the record
		}
		return nil
	}
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
	fmt.Fprintf(w, "\n%s now records asb %s.\n", schema.RecordFile, o.Factory.Version)
	if c := u.Conflicts(); len(c) > 0 {
		return &outer.ConflictError{Files: c}
	}
	return nil
}
