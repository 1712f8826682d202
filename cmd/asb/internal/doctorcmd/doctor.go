// Package doctorcmd is `asb doctor`: can this machine run the agent's VM?
package doctorcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/runner"
)

// Options are the parsed command line of `asb doctor`.
type Options struct {
	IO     *cmdutil.IOStreams
	Host   runner.Host
	Format string // "table" or "json"
}

// NewCmd returns `asb doctor`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	return newCmd(f, nil)
}

// newCmd lets tests swap the run function.
func newCmd(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IO, Host: runner.SystemHost{}}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check that this machine can run the agent's microVM",
		Long: `Check what the agent's microVM needs on this machine, one line per check:

  msb              microsandbox's CLI on PATH, version ` + runner.MSBVersion + `
  libkrunfw        the VM firmware library in ../lib beside msb's real path
  /dev/kvm         present and writable (Linux)
  CPU virtualization  vmx or svm in /proc/cpuinfo (Linux), Apple Silicon (macOS)
  image builder    a docker whose daemon answers, or podman
  free disk        in the current folder (a warning under 10 GiB)
  msb doctor       microsandbox's own verdict

✓ passed, ! a warning, ✗ failed (with how to fix it underneath), - not
checked. asb doctor exits 1 when the agent cannot run here: msb missing or
broken, no KVM, no CPU virtualization, or no builder.`,
		Example: `  # Is this machine ready?
  asb doctor

  # For scripts: one JSON object, "ok" says whether the agent can run
  asb doctor --format json | jq -r '.checks[] | select(.status=="fail") | .name'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Format != "table" && opts.Format != "json" {
				return &cmdutil.UsageError{Err: fmt.Errorf("--format %q: use table or json", opts.Format)}
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Format, "format", "table", "output: table or json")
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{"table", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// jsonReport is the --format json output.
type jsonReport struct {
	OK       bool           `json:"ok"`
	Blocking []string       `json:"blocking"`
	Checks   []runner.Check `json:"checks"`
}

// Run runs the checks and prints them.
func Run(ctx context.Context, o *Options) error {
	if ctx == nil {
		ctx = context.Background()
	}
	r := runner.Doctor(ctx, o.Host)
	var err error
	if o.Format == "json" {
		enc := json.NewEncoder(o.IO.Out)
		enc.SetIndent("", "  ")
		blocking := r.Blocking()
		if blocking == nil {
			blocking = []string{}
		}
		err = enc.Encode(jsonReport{OK: r.OK(), Blocking: blocking, Checks: r.Checks})
	} else {
		err = printTable(o.IO.Out, r)
	}
	if err != nil {
		return fmt.Errorf("print the report: %w", err)
	}
	if !r.OK() {
		return &cmdutil.SilentError{Code: 1}
	}
	return nil
}

var marks = map[runner.Status]string{
	runner.StatusOK:   "✓",
	runner.StatusWarn: "!",
	runner.StatusFail: "✗",
	runner.StatusSkip: "-",
}

func printTable(w io.Writer, r runner.DoctorReport) error {
	width := 0
	for _, c := range r.Checks {
		width = max(width, len(c.Name))
	}
	var b strings.Builder
	for _, c := range r.Checks {
		fmt.Fprintf(&b, "%s %-*s  %s\n", marks[c.Status], width, c.Name, c.Detail)
		if c.Fix != "" && c.Status != runner.StatusOK {
			fmt.Fprintf(&b, "  %*s  fix: %s\n", width, "", c.Fix)
		}
	}
	if blocking := r.Blocking(); len(blocking) > 0 {
		fmt.Fprintf(&b, "\nThe agent cannot run on this machine: %s.\n", strings.Join(blocking, ", "))
	} else {
		fmt.Fprintf(&b, "\nThis machine can run the agent.\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
