// Package prunecmd is `asb prune`: remove what asb's sandboxes left on
// this machine — stopped VMs, volumes whose outer folder is gone, images
// no VM uses — after asking.
package prunecmd

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/host"
	"github.com/agents-sandbox/asb/internal/termtext"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/runner"
)

// Options are the parsed command line of `asb prune`.
type Options struct {
	IO        *cmdutil.IOStreams
	MSB       runner.MSB
	Now       func() time.Time
	OlderThan string
	DryRun    bool
	Yes       bool
	Volumes   []string
	Format    string
	Exists    func(string) bool // nil: os.Stat
	Caps      func(context.Context) (host.MSBCaps, error)
}

// NewCmd returns `asb prune`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{IO: f.IO, MSB: runner.MSB{Getenv: f.Getenv}, Now: f.Now}
	cmd := &cobra.Command{
		Use:   "prune [--older-than 7d] [--dry-run] [--yes] [--volume NAME]...",
		Short: "Remove stopped VMs, volumes whose folder is gone and images no VM uses",
		Long: `Remove what asb's sandboxes left on this machine, across every outer folder:
  - asb's VMs that are stopped (the next asb task creates them again);
  - volumes whose outer folder is gone;
  - asb's images in msb that no remaining VM uses (loaded again when needed).
A running VM, anything asb did not make, and the home volume of a folder
that still exists are never removed; --volume NAME removes a home volume
all the same (everything under /home/dev in it is lost).

It lists what it would remove and asks first; --yes removes without
asking (needed where no terminal can answer), --dry-run only lists.
--older-than 7d keeps what was created less than 7 days ago (s, m, h, d).
Where the installed msb has msb prune (0.7.7+), it also runs it: msb's
own cleanup of unused runtime memory files.`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return Run(cmd.Context(), opts) },
	}
	cmd.Flags().StringVar(&opts.OlderThan, "older-than", "", "only what is at least this old (e.g. 7d, 12h)")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "list what would be removed; remove nothing")
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "remove without asking")
	cmd.Flags().StringArrayVar(&opts.Volumes, "volume", nil, "also remove this volume, even a home volume whose folder exists (repeatable)")
	cmd.Flags().StringVar(&opts.Format, "format", "", "json: the list as JSON (with --dry-run or --yes)")
	return cmd
}

// Run prunes.
func Run(ctx context.Context, o *Options) error {
	if err := cmdutil.CheckFormat(o.Format); err != nil {
		return err
	}
	po := runner.PruneOptions{Now: o.Now(), Volumes: o.Volumes, SessionGone: outer.SessionGone}
	if o.OlderThan != "" {
		d, err := runner.ParseAge(o.OlderThan)
		if err != nil {
			return &cmdutil.UsageError{Err: fmt.Errorf("--older-than: %w", err)}
		}
		po.OlderThan = d
	}
	m := o.MSB
	m.Fresh = !o.DryRun // what is removed is judged by msb's labels as they are now
	fleet, err := runner.LoadFleet(ctx, m, o.Exists)
	if err != nil {
		return cmdutil.MSBError("list the sandboxes", err)
	}
	plan := fleet.PrunePlan(po)
	if err := checkNamed(fleet, plan, o.Volumes); err != nil {
		return err
	}
	if o.Format == "json" && !o.DryRun && !o.Yes {
		return &cmdutil.UsageError{Err: errors.New("--format json lists without asking: add --dry-run to look, or --yes to remove")}
	}
	show(o, plan)
	if o.DryRun {
		return msbPrune(ctx, o, "--dry-run")
	}
	confirmed := o.Yes
	if len(plan) > 0 && !o.Yes {
		if err := ask(o, len(plan)); err != nil {
			return err
		}
		confirmed = true
	}
	for _, r := range plan {
		if err := o.MSB.Remove(ctx, r); err != nil {
			return fmt.Errorf("remove the %s %s: %w", r.Kind, r.Name, err)
		}
	}
	if len(plan) > 0 && o.Format == "" {
		fmt.Fprintf(o.IO.Out, "Removed %d.\n", len(plan))
	}
	if !confirmed { // nothing of asb's to remove, and no --yes for msb's own
		return msbPrune(ctx, o, "--dry-run")
	}
	return msbPrune(ctx, o, "--yes")
}

// checkNamed refuses a --volume msb does not have, or one a VM that stays
// still mounts.
func checkNamed(f runner.Fleet, plan []runner.Removal, names []string) error {
	for _, n := range names {
		i := slices.IndexFunc(f.Volumes, func(v runner.FleetVolume) bool { return v.Name == n })
		if i < 0 {
			return fmt.Errorf("--volume %s: msb has no such volume (asb df lists them)", runner.Shown(n))
		}
		if !slices.ContainsFunc(plan, func(r runner.Removal) bool { return r.Kind == "volume" && r.Name == n }) {
			return fmt.Errorf("--volume %s: a VM that stays mounts it (%v); remove that VM first (asb task vm:rm in its folder)",
				runner.Shown(n), f.Volumes[i].UsedBy)
		}
	}
	return nil
}

func show(o *Options, plan []runner.Removal) {
	if o.Format == "json" {
		enc := json.NewEncoder(termtext.JSON(o.IO.Out))
		enc.SetIndent("", "  ")
		_ = enc.Encode(append([]runner.Removal{}, plan...))
		return
	}
	if len(plan) == 0 {
		fmt.Fprintln(o.IO.Out, "Nothing to prune.")
		return
	}
	verb := "Removes"
	if o.DryRun {
		verb = "Would remove"
	}
	fmt.Fprintf(o.IO.Out, "%s:\n", verb)
	w := tabwriter.NewWriter(o.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "KIND\tNAME\tFOLDER\tSESSION\tSIZE\tWHY")
	var total int64
	for _, r := range plan {
		folder := runner.Shown(r.Folder)
		if r.FolderGone {
			folder += " (gone)"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Kind, runner.Shown(r.Name), folder, runner.Shown(r.Session), runner.Bytes(r.Bytes), r.Why)
		total += r.Bytes
	}
	_ = w.Flush()
	fmt.Fprintf(o.IO.Out, "%d in all, %s.\n", len(plan), runner.Bytes(total))
}

// ask asks at a terminal; elsewhere it refuses, since nothing can answer.
func ask(o *Options, n int) error {
	if !cmdutil.IsTerminal(o.IO.In) {
		return fmt.Errorf("asb prune removes the %d listed above only when told: run it at a terminal to be asked, or pass --yes (--dry-run only lists)", n)
	}
	ok, err := cmdutil.Confirm(bufio.NewReader(o.IO.In), o.IO.ErrOut, fmt.Sprintf("Remove these %d? [y/N] ", n))
	if err != nil && !ok {
		return errors.New("asb prune: no answer; nothing was removed")
	}
	if !ok {
		return errors.New("asb prune: nothing was removed")
	}
	return nil
}

// msbPrune runs msb's own prune (its unused runtime memory files) where
// the installed msb has it.
func msbPrune(ctx context.Context, o *Options, flag string) error {
	caps, err := cmdutil.InstalledMSB(ctx, o.Caps)
	if err != nil || !caps.Has(host.PrimPrune) {
		return nil //nolint:nilerr // asb's own prune stands without it
	}
	out, err := runner.Output(ctx, "", "msb", "prune", flag)
	if err != nil {
		return fmt.Errorf("msb prune %s: %w", flag, err)
	}
	if o.Format == "" {
		fmt.Fprintf(o.IO.Out, "msb prune %s (msb %s's own cleanup of runtime memory files):\n%s", flag, caps.Version, out)
	}
	return nil
}
