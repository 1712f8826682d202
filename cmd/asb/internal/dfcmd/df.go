// Package dfcmd is `asb df`: the disk asb's sandboxes take, per outer
// folder and kind, with a total.
package dfcmd

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/host"
	"github.com/agents-sandbox/asb/internal/termtext"
	"github.com/agents-sandbox/asb/runner"
)

// The kinds of disk asb df tells apart.
const (
	KindImages  = "msb images"
	KindVolumes = "home volumes"
	KindVMs     = "VM disks"
	KindBuilder = "builder images"
	KindCache   = "builder cache"
	// NotAsbs is the folder of what no label of asb's claims.
	NotAsbs = "(not asb's)"
	// Shared is the folder of the builder's cache, which every build uses.
	Shared = "(shared)"
)

// Options are the parsed command line of `asb df`.
type Options struct {
	IO     *cmdutil.IOStreams
	MSB    runner.MSB
	Format string
	Exists func(string) bool // nil: os.Stat
	// Caps is the installed msb's row of the table (nil: detect it).
	Caps func(context.Context) (host.MSBCaps, error)
	// Builder is the image builder the Taskfile uses (runner.DetectBuilder).
	Builder func() runner.Builder
}

// NewCmd returns `asb df`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{IO: f.IO, MSB: runner.MSB{Getenv: f.Getenv},
		Builder: func() runner.Builder { return runner.DetectBuilder(f.Getenv, nil, nil) }}
	cmd := &cobra.Command{
		Use:   "df [--format json]",
		Short: "Show the disk asb's sandboxes take, per outer folder and kind, with a total",
		Long: `Show the disk taken on this machine per outer folder and kind: msb images
(msb's size_bytes, a digest that several references share counted once),
home volumes and VM disks (the bytes allocated under msb's state folder,
as du counts them: msb 0.7.2 does not measure them itself), and the image
builder's (docker or podman, as the Taskfile picks it) images per folder
and its build cache. What no VM of asb's accounts for is listed as (not
asb's), so the total is msb's and the builder's whole use. Where the
installed msb has msb df (0.7.7+), its own report follows.`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return Run(cmd.Context(), opts) },
	}
	cmd.Flags().StringVar(&opts.Format, "format", "", "json: one JSON object, for scripts")
	return cmd
}

// Row is one folder's use of one kind.
type Row struct {
	Folder     string `json:"folder"`
	FolderGone bool   `json:"folder_gone"`
	Kind       string `json:"kind"`
	Count      int    `json:"count"`
	Bytes      int64  `json:"bytes"`
}

// Report is what asb df prints.
type Report struct {
	MSBHome    string `json:"msb_home"`
	Rows       []Row  `json:"rows"`
	TotalBytes int64  `json:"total_bytes"`
}

// Run reports the disk use.
func Run(ctx context.Context, o *Options) error {
	if err := cmdutil.CheckFormat(o.Format); err != nil {
		return err
	}
	fleet, err := runner.LoadFleet(ctx, o.MSB, o.Exists)
	if err != nil {
		return cmdutil.MSBError("measure the sandboxes", err)
	}
	if o.Builder != nil {
		if err := fleet.LoadBuilder(ctx, o.Builder()); err != nil {
			fmt.Fprintf(o.IO.ErrOut, "asb df: the builder's images are not counted: %v\n", err)
		}
	}
	rep := Tally(fleet)
	if o.Format == "json" {
		enc := json.NewEncoder(termtext.JSON(o.IO.Out))
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	w := tabwriter.NewWriter(o.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "FOLDER\tKIND\tCOUNT\tSIZE")
	for _, r := range rep.Rows {
		folder := runner.Shown(r.Folder)
		if r.FolderGone {
			folder += " (gone)"
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\n", folder, r.Kind, r.Count, runner.Bytes(r.Bytes))
	}
	fmt.Fprintf(w, "TOTAL\t\t\t%s\n", runner.Bytes(rep.TotalBytes))
	if err := w.Flush(); err != nil {
		return err
	}
	return msbDf(ctx, o)
}

// Tally sums the fleet per folder and kind.
func Tally(f runner.Fleet) Report {
	rows := map[[2]string]*Row{}
	add := func(o runner.Owner, kind string, n int64) {
		folder := cmp.Or(o.Folder, NotAsbs)
		r := rows[[2]string{folder, kind}]
		if r == nil {
			r = &Row{Folder: folder, FolderGone: o.FolderGone, Kind: kind}
			rows[[2]string{folder, kind}] = r
		}
		r.Count++
		r.Bytes += n
	}
	for _, vm := range f.VMs {
		add(vm.Owner, KindVMs, vm.Bytes)
	}
	for _, v := range f.Volumes {
		add(v.Owner, KindVolumes, v.Bytes)
	}
	for _, img := range f.Images {
		add(img.Owner, KindImages, img.Bytes)
	}
	for _, img := range f.BuilderImages {
		add(img.Owner, KindBuilder, img.Bytes)
	}
	if f.Builder != "" {
		add(runner.Owner{Folder: Shared}, KindCache, f.BuilderCache)
	}
	rep := Report{MSBHome: f.Home, Rows: []Row{}}
	for _, r := range rows {
		rep.Rows = append(rep.Rows, *r)
		rep.TotalBytes += r.Bytes
	}
	slices.SortFunc(rep.Rows, func(a, b Row) int {
		return cmp.Or(cmp.Compare(rank(a.Folder), rank(b.Folder)), strings.Compare(a.Folder, b.Folder), strings.Compare(a.Kind, b.Kind))
	})
	return rep
}

// msbDf prints msb's own report where the installed msb has msb df.
func msbDf(ctx context.Context, o *Options) error {
	caps, err := cmdutil.InstalledMSB(ctx, o.Caps)
	if err != nil || !caps.Has(host.PrimDf) {
		return nil //nolint:nilerr // asb's own report stands without it
	}
	out, err := runner.Output(ctx, "", "msb", "df")
	if err != nil {
		return fmt.Errorf("msb df: %w", err)
	}
	fmt.Fprintf(o.IO.Out, "\nmsb df (msb %s's own report, by its categories):\n%s", caps.Version, out)
	return nil
}

// rank puts the folders first, then what is shared, then what is not asb's.
func rank(folder string) int {
	switch folder {
	case Shared:
		return 1
	case NotAsbs:
		return 2
	}
	return 0
}
