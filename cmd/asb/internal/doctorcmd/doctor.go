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
	"github.com/agents-sandbox/asb/host"
	"github.com/agents-sandbox/asb/internal/termtext"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/schema"
)

// Options are the parsed command line of `asb doctor`.
type Options struct {
	IO     *cmdutil.IOStreams
	Host   host.Host
	Format string // "table" or "json"
	Boot   bool   // only the pre-boot check (what vm:create and vm:start run first)
	// Needs are the disk limits of the outer folder --boot runs in (nil
	// outside one): checked against the host's free disk.
	Needs func() []host.DiskNeed
	// Folder are the checks of the outer folder doctor runs in, on this
	// host (its secrets' commands); none outside one.
	Folder func() []host.Check
	// Policy reports the policy files in force (nil: not checked).
	Policy func() host.Check
}

// NewCmd returns `asb doctor`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	return newCmd(f, nil)
}

// newCmd lets tests swap the run function.
// doctorLong is doctor's help: one line per check it makes.
var doctorLong = `Check what the agent's microVM needs on this machine, one line per check:

  msb              microsandbox's CLI on PATH
  msb version      ` + host.MinMSB + ` or a later 0.7 release, looked up in asb's table of
                   releases: a warning below ` + host.RecommendedMSB + ` (microsandbox's own advice)
                   and for a release newer than the table knows (` + host.NewestKnownMSB + `)
  libkrunfw        the VM firmware library in ../lib beside msb's real path
  /dev/kvm         present and writable (Linux)
  CPU virtualization  vmx or svm in /proc/cpuinfo (Linux), Apple Silicon (macOS)
  image builder    a docker whose daemon answers, or podman
  free disk        in the current folder (a warning under 10 GiB)
  msb doctor       microsandbox's own verdict
  secret commands  in an outer folder: the program of each secret's command
                   (asb secret add --from) is found here; never run
  policy           the policy files in force (/etc/asb/policy.yaml, the
                   administrator's; ~/.config/asb/policy.yaml, yours): what
                   no outer folder may ask for (docs/trust.md)

✓ passed, ! a warning, ✗ failed (with how to fix it underneath), - not
checked. asb doctor exits 1 when the agent cannot run here: msb missing or
broken, no KVM, no CPU virtualization, or no builder.

--boot checks only what booting a microVM needs (/dev/kvm and CPU
virtualization on Linux, Apple silicon on macOS), prints nothing when the
host has it, and exits 1 with the reason and the fix when it does not. The
Taskfile's vm:create and vm:start run it first, so a host that cannot boot
is told so in a second, before any image is built, instead of after minutes
of a doomed boot. image:build and image:load do not need it. In an outer
folder it also checks that the disk limits fit the free disk: the root disk
and the container disk (asb limit ls) under MSB_HOME, the workspace quota
in the folder.
` + host.SkipEnv + `=1 skips that check, for a host where asb's reading is wrong.`

func newCmd(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IO, Host: f.Host, Needs: func() []host.DiskNeed { return folderNeeds(f) },
		Folder: func() []host.Check { return folderChecks(f) },
		Policy: func() host.Check { return policyCheck(f) }}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check that this machine can run the agent's microVM",
		Long:  doctorLong,
		Example: `  # Is this machine ready?
  asb doctor

  # For scripts: one JSON object, "ok" says whether the agent can run
  asb doctor --format json | jq -r '.checks[] | select(.status=="fail") | .name'

  # Can a microVM boot here? (silent and exit 0 when it can)
  asb doctor --boot`,
		Args: cmdutil.NoArgs,
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
	cmd.Flags().BoolVar(&opts.Boot, "boot", false, "only check that a microVM can boot here (quiet when it can; "+host.SkipEnv+"=1 skips)")
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{"table", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// jsonReport is the --format json output.
type jsonReport struct {
	OK       bool         `json:"ok"`
	Blocking []string     `json:"blocking"`
	Checks   []host.Check `json:"checks"`
}

// Run runs the checks and prints them.
func Run(ctx context.Context, o *Options) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if o.Boot {
		return runBoot(ctx, o)
	}
	r := host.Doctor(ctx, o.Host)
	if o.Folder != nil {
		r.Checks = append(r.Checks, o.Folder()...)
	}
	if o.Policy != nil {
		r.Checks = append(r.Checks, o.Policy())
	}
	var err error
	if o.Format == "json" {
		enc := json.NewEncoder(termtext.JSON(o.IO.Out))
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

var marks = map[host.Status]string{
	host.StatusOK:   "✓",
	host.StatusWarn: "!",
	host.StatusFail: "✗",
	host.StatusSkip: "-",
}

func printTable(w io.Writer, r host.DoctorReport) error {
	var b strings.Builder
	printChecks(&b, r.Checks)
	if blocking := r.Blocking(); len(blocking) > 0 {
		fmt.Fprintf(&b, "\nThe agent cannot run on this machine: %s.\n", strings.Join(blocking, ", "))
	} else {
		fmt.Fprintf(&b, "\nThis machine can run the agent.\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// bootJSON is the --boot --format json output.
type bootJSON struct {
	OK      bool         `json:"ok"`
	Skipped bool         `json:"skipped"`
	Checks  []host.Check `json:"checks"`
}

// runBoot is the pre-boot check: silent when a microVM can boot here, the
// failed checks with their fixes (as asb doctor prints them) and exit 1
// when it cannot.
func runBoot(ctx context.Context, o *Options) error {
	r := host.Boot(ctx, o.Host)
	if !r.Skipped && o.Needs != nil {
		if needs := o.Needs(); len(needs) > 0 {
			r.Checks = append(r.Checks, host.DiskLimits(o.Host, needs))
		}
	}
	if o.Format == "json" {
		checks := r.Checks
		if checks == nil {
			checks = []host.Check{}
		}
		enc := json.NewEncoder(termtext.JSON(o.IO.Out))
		enc.SetIndent("", "  ")
		if err := enc.Encode(bootJSON{OK: r.OK(), Skipped: r.Skipped, Checks: checks}); err != nil {
			return fmt.Errorf("print the report: %w", err)
		}
	}
	switch {
	case r.Skipped:
		fmt.Fprintf(o.IO.ErrOut, "asb: the host check is skipped (%s=1): a VM that cannot boot here fails only when msb gives up\n", host.SkipEnv)
		return nil
	case r.OK():
		return nil
	}
	if o.Format != "json" {
		var failed []host.Check
		for _, c := range r.Checks {
			if c.Status == host.StatusFail {
				failed = append(failed, c)
			}
		}
		var b strings.Builder
		printChecks(&b, failed)
		fmt.Fprintf(&b, "\nThis host cannot boot the agent's microVM (%s): nothing was started.\n", strings.Join(host.DoctorReport{Checks: r.Checks}.Blocking(), ", "))
		fmt.Fprintf(&b, "Building and loading the image still work here (asb task image:load); asb doctor checks everything else.\n")
		if _, err := io.WriteString(o.IO.ErrOut, b.String()); err != nil {
			return err
		}
	}
	return &cmdutil.SilentError{Code: 1}
}

// printChecks writes one line per check, its fix underneath.
func printChecks(b *strings.Builder, checks []host.Check) {
	width := 0
	for _, c := range checks {
		width = max(width, len(c.Name))
	}
	for _, c := range checks {
		fmt.Fprintf(b, "%s %-*s  %s\n", marks[c.Status], width, c.Name, c.Detail)
		if c.Fix != "" && c.Status != host.StatusOK {
			fmt.Fprintf(b, "  %*s  fix: %s\n", width, "", c.Fix)
		}
	}
}

// policyCheck is the line of the policy files in force; one asb cannot
// read stops every folder, so it blocks.
func policyCheck(f *cmdutil.Factory) host.Check {
	c := host.Check{Name: "policy", Status: host.StatusOK, Blocking: true}
	user := schema.UserPolicyPath(f.Getenv)
	p, err := cmdutil.Judge(f).Policy()
	if err != nil {
		c.Status, c.Detail = host.StatusFail, err.Error()
		c.Fix = "fix the policy file (docs/trust.md lists its keys)"
		return c
	}
	c.Detail = outer.PolicyFilesLine(p, f.MachinePolicy, user)
	return c
}
