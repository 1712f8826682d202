// Package validatecmd is `asb validate`: check an outer folder's boundary
// and its files before msb or go-task ever read them.
package validatecmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/host"
	"github.com/agents-sandbox/asb/internal/termtext"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/schema"
)

// Options are the parsed command line of `asb validate`.
type Options struct {
	IO     *cmdutil.IOStreams
	Getwd  func() (string, error)
	Getenv func(string) string

	Dir    string // as given; "" means walk up from the working directory
	Format string // text or json
	// Quiet prints errors only, and nothing when there is none (vm:create
	// checks again right before msb create).
	Quiet bool
	// Conf is the config msb create reads: sandbox.yaml, or a session's
	// derived one (.asb/sessions/NAME/sandbox.yaml), judged the same way.
	Conf string
	// Policy loads the policy in force (nil: none), whose refusals are
	// errors: vm:create runs validate, so msb never reads a folder the
	// policy forbids.
	Policy func() (*schema.Policy, error)
}

// NewCmd returns `asb validate`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{IO: f.IO, Getwd: f.Getwd, Getenv: f.Getenv, Policy: cmdutil.Judge(f).Policy}
	cmd := &cobra.Command{
		Use:   "validate [DIR]",
		Short: "Check the outer folder: syntax, mounts, network, secrets",
		Long: `Check the outer folder DIR (default: the folder holding sandbox.yaml, found
by walking up from the current folder) before msb or go-task read it.

It reads sandbox.yaml and secrets.yaml exactly as strictly as msb 0.7.2
(unknown keys, YAML anchors, several documents and bare yes/no are errors),
then checks the boundary:

  mounts      nothing that exposes the outer folder, an ancestor of it, $HOME,
              / or a secrets file; /workspace mounted read-write; the agent's
              config folder mounted read-only
  secrets     every value is "${VAR}" (a literal would be stored in plain
              text), every secret has valid allow hosts the network reaches,
              and its variable is set (in the environment or secrets.env)
  secrets.env git-ignored, not tracked by git, mode 0600
  network     open or public egress is a warning
  Taskfile    readable by go-task

Each problem is printed as FILE:LINE:COL: error|warning: what — how to fix,
then a summary. Secret values are never printed. The exit code is 1 when
there is an error, 0 when there are only warnings.`,
		Example: `  # Check the outer folder you are in (or above)
  asb validate

  # Check another folder
  asb validate ~/sandboxes/myproj

  # For scripts and editors: one JSON document
  asb validate --format json | jq '.problems[] | select(.severity == "error")'`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Dir = args[0]
			}
			return Run(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Format, "format", "text", "output format: text or json")
	cmd.Flags().BoolVarP(&opts.Quiet, "quiet", "q", false, "print errors only, and nothing when there is none")
	cmd.Flags().StringVar(&opts.Conf, "conf", outer.SandboxFile, "the config msb create reads: sandbox.yaml or a session's (.asb/sessions/NAME/sandbox.yaml, asb session new)")
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// Report is the --format json output.
type Report struct {
	Dir      string           `json:"dir"`
	Problems []schema.Problem `json:"problems"`
	Errors   int              `json:"errors"`
	Warnings int              `json:"warnings"`
}

// Run checks the folder and prints the problems.
func Run(ctx context.Context, o *Options) error {
	if o.Format != "text" && o.Format != "json" {
		return &cmdutil.UsageError{Err: fmt.Errorf("--format %q: use text or json", o.Format)}
	}
	dir, err := o.outerDir()
	if err != nil {
		return err
	}
	probs, err := check(ctx, o, dir)
	if err != nil {
		return err
	}
	nerr, nwarn := schema.Count(probs)
	if o.Format == "json" {
		if probs == nil {
			probs = []schema.Problem{}
		}
		enc := json.NewEncoder(termtext.JSON(o.IO.Out))
		enc.SetIndent("", "  ")
		if err := enc.Encode(Report{Dir: dir, Problems: probs, Errors: nerr, Warnings: nwarn}); err != nil {
			return fmt.Errorf("write the report: %w", err)
		}
	} else {
		for _, p := range probs {
			if !o.Quiet || p.Severity == schema.SeverityError {
				fmt.Fprintln(o.IO.Out, p.String())
			}
		}
		if !o.Quiet || nerr > 0 {
			fmt.Fprintln(o.IO.Out, Summary(nerr, nwarn))
		}
	}
	if nerr > 0 {
		return &cmdutil.SilentError{Code: 1}
	}
	return nil
}

// Summary is the last line of the text output: "2 errors, 1 warning" or
// "ok: no problems".
func Summary(errs, warnings int) string {
	if errs == 0 && warnings == 0 {
		return "ok: no problems"
	}
	return plural(errs, "error") + ", " + plural(warnings, "warning")
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// outerDir is DIR when given (it must hold sandbox.yaml), else the first
// folder holding sandbox.yaml from the working directory up.
func (o *Options) outerDir() (string, error) {
	wd, err := o.Getwd()
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	if o.Dir != "" {
		dir := o.Dir
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(wd, dir)
		}
		dir = filepath.Clean(dir)
		fi, err := os.Stat(dir)
		if err != nil {
			return "", fmt.Errorf("validate %s: %w", o.Dir, errors.Unwrap(err))
		}
		if !fi.IsDir() {
			return "", &cmdutil.UsageError{Err: fmt.Errorf("%s is a file; give the outer folder (the one holding sandbox.yaml)", o.Dir)}
		}
		return dir, nil
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, schema.SandboxFile)); err == nil {
			return d, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("look for sandbox.yaml: %w", err)
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no sandbox.yaml in %s or any folder above it; cd into an outer folder, give its path, or create one with asb init --agent AGENT", wd)
		}
	}
}

// check checks the folder, and with it every session's derived config;
// with --conf of a session's, the folder's own files and that config.
func check(ctx context.Context, o *Options, dir string) ([]schema.Problem, error) {
	opts := outer.CheckOptionsFor(dir, o.Getenv)
	opts.Context = ctx
	// The release of the msb on PATH, for the message of a key only a newer
	// msb reads, as an earlier command asked it (validate only looks: it
	// runs no msb); unknown, the message says less.
	opts.MSBVersion = host.KnownMSB(host.SystemHost{})
	if o.Policy != nil {
		pol, err := o.Policy()
		if err != nil {
			return nil, err
		}
		opts.Policy = pol
	}
	probs := schema.CheckDir(dir, opts)
	var sessions []outer.Session
	switch conf := filepath.ToSlash(filepath.Clean(o.Conf)); {
	case o.Conf == "" || conf == outer.SandboxFile:
		all, err := outer.Sessions(dir)
		if err != nil {
			return nil, err
		}
		sessions = all
	default:
		name, ok := outer.SessionOfConf(conf)
		if !ok {
			return nil, &cmdutil.UsageError{Err: fmt.Errorf("--conf %q: give sandbox.yaml or a session's derived config, .asb/sessions/NAME/sandbox.yaml (asb session ls lists them)", o.Conf)}
		}
		s, err := outer.FindSession(dir, name)
		if err != nil {
			return nil, err
		}
		sessions = []outer.Session{s}
	}
	for _, s := range sessions {
		probs = append(probs, outer.CheckSessionConf(dir, s, opts)...)
	}
	schema.SortProblems(probs)
	return probs, nil
}
