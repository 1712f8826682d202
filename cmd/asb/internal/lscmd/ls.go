// Package lscmd is `asb ls`: asb's sandboxes across every outer folder on
// this machine, from msb's own listing and the labels asb puts on each VM.
package lscmd

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/internal/termtext"
	"github.com/agents-sandbox/asb/runner"
)

// Options are the parsed command line of `asb ls`.
type Options struct {
	IO     *cmdutil.IOStreams
	MSB    runner.MSB
	Now    func() time.Time
	All    bool
	Format string
	// Exists says whether an outer folder is still there (nil: os.Stat).
	Exists func(string) bool
}

// NewCmd returns `asb ls`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{IO: f.IO, MSB: runner.MSB{Getenv: f.Getenv}, Now: f.Now}
	cmd := &cobra.Command{
		Use:   "ls [--all] [--format json]",
		Short: "List asb's sandboxes across every outer folder: folder, session, agent, status, age, disk",
		Long: `List the VMs asb made on this machine, whichever outer folder they belong
to (the current directory does not matter): the folder, the session ("" is
the folder's own VM), the agent, msb's status, the age and the VM's disk.

asb knows its VMs by the labels vm:create puts on them (asb.folder,
asb.session, asb.agent, asb.home); VMs without them are not asb's and are
not listed. By default only live VMs (running or booting) of folders that
still exist are listed, like docker ps; --all adds stopped VMs and those
whose folder is gone (asb prune removes both).`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return Run(cmd.Context(), opts) },
	}
	cmd.Flags().BoolVarP(&opts.All, "all", "a", false, "also list stopped VMs and those whose outer folder is gone")
	cmd.Flags().StringVar(&opts.Format, "format", "", "json: one JSON array, for scripts")
	return cmd
}

// Row is one VM as asb ls prints it.
type Row struct {
	runner.Owner
	VM         string    `json:"vm"`
	Status     string    `json:"status"`
	Image      string    `json:"image"`
	HomeVolume string    `json:"home_volume"`
	Created    time.Time `json:"created_at"`
	AgeSeconds int64     `json:"age_seconds"`
	DiskBytes  int64     `json:"disk_bytes"`
}

// Run lists the sandboxes.
func Run(ctx context.Context, o *Options) error {
	if err := cmdutil.CheckFormat(o.Format); err != nil {
		return err
	}
	fleet, err := runner.LoadFleet(ctx, o.MSB, o.Exists)
	if err != nil {
		return cmdutil.MSBError("list the sandboxes", err)
	}
	now := o.Now()
	rows := []Row{}
	for _, vm := range fleet.VMs {
		if vm.Folder == "" || !o.All && (vm.FolderGone || !live(vm.Status)) {
			continue
		}
		rows = append(rows, Row{Owner: vm.Owner, VM: vm.Name, Status: vm.Status, Image: vm.Image, HomeVolume: vm.HomeVolume,
			Created: vm.Created, AgeSeconds: int64(now.Sub(vm.Created).Seconds()), DiskBytes: vm.Bytes})
	}
	slices.SortFunc(rows, func(a, b Row) int {
		return cmp.Or(strings.Compare(a.Folder, b.Folder), strings.Compare(a.Session, b.Session), strings.Compare(a.VM, b.VM))
	})
	if o.Format == "json" {
		enc := json.NewEncoder(termtext.JSON(o.IO.Out))
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	if len(rows) == 0 {
		what := "running"
		if o.All {
			what = "any"
		}
		fmt.Fprintf(o.IO.Out, "No sandbox of asb's is %s here.%s\n", what, map[bool]string{false: " asb ls --all lists stopped ones too.", true: ""}[o.All])
		return nil
	}
	w := tabwriter.NewWriter(o.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "FOLDER\tSESSION\tAGENT\tVM\tSTATUS\tAGE\tDISK")
	for _, r := range rows {
		folder := runner.Shown(r.Folder)
		if r.FolderGone {
			folder += " (gone)"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", folder, cmp.Or(runner.Shown(r.Session), "-"), runner.Shown(r.Agent),
			runner.Shown(r.VM), runner.Shown(r.Status), runner.Age(now, r.Created), runner.Bytes(r.DiskBytes))
	}
	return w.Flush()
}

// live: msb runs or boots the VM (anything but stopped).
func live(status string) bool {
	switch strings.ToLower(status) {
	case "stopped", "crashed", "failed", "exited":
		return false
	}
	return true
}
