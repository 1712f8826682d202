// Package taskcmd is `asb task`: run the outer folder's Taskfile with the
// go-task library built into asb.
package taskcmd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"time"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/host"
	"github.com/agents-sandbox/asb/internal/termtext"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/runner"
)

// Options are the parsed command line of `asb task`.
type Options struct {
	IO         *cmdutil.IOStreams
	Getwd      func() (string, error)
	Getenv     func(string) string
	Executable func() (string, error)
	Now        func() time.Time
	LookPath   func(string) (string, error) // nil: exec.LookPath
	Engine     func(context.Context, runner.EngineSpec, *cmdutil.IOStreams) error
	Templates  fs.FS       // asb's templates: what a trusted folder renders from
	IsTerminal func() bool // whether a question can be asked on IO.In
	Host       host.Host   // the machine (a session's capacity check); nil: host.SystemHost
	// MachinePolicy is the administrator's policy file (Factory's).
	MachinePolicy string

	Dir     string
	Tasks   []string
	Args    []string // after --
	List    bool
	Dry     bool
	Summary string
	Force   bool
	Verbose bool
	Silent  bool
	Yes     bool
	Session string // asb session NAME's VM, config and checkout
}

// NewCmd returns `asb task`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{IO: f.IO, Getwd: f.Getwd, Getenv: f.Getenv, Executable: f.Executable, Now: f.Now, Engine: f.Engine,
		Templates: f.Templates, IsTerminal: func() bool { return cmdutil.IsTerminal(f.IO.In) }, Host: f.Host, MachinePolicy: f.MachinePolicy}
	cmd := &cobra.Command{
		Use:     "task [TASK...] [-- ARGS...]",
		Short:   "Run tasks of the outer folder's Taskfile (build, load, create, start, attach)",
		Long:    taskLong,
		Example: taskExample,
		Args:    cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if at := cmd.ArgsLenAtDash(); at >= 0 {
				opts.Tasks, opts.Args = args[:at], args[at:]
			} else {
				opts.Tasks = args
			}
			return Run(cmd.Context(), opts)
		},
		ValidArgsFunction: func(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			names, err := completeNames(opts)
			if err != nil {
				return nil, cobra.ShellCompDirectiveError
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Dir, "dir", "d", "", "the outer folder (default: found by walking up from the current folder)")
	fl.BoolVarP(&opts.List, "list", "l", false, "list the tasks with their descriptions")
	fl.BoolVarP(&opts.Dry, "dry", "n", false, "print the commands that would run; run nothing")
	fl.StringVar(&opts.Summary, "summary", "", "describe TASK: what it does, its dependencies and commands")
	fl.BoolVarP(&opts.Force, "force", "f", false, "run the named tasks even if they are up to date")
	fl.BoolVarP(&opts.Verbose, "verbose", "v", false, "say why each task runs or is skipped")
	fl.BoolVarP(&opts.Silent, "silent", "s", false, "do not echo the commands")
	fl.BoolVarP(&opts.Yes, "yes", "y", false, "answer yes to questions (home:reset)")
	fl.StringVar(&opts.Session, "session", "", "run the tasks for session NAME (asb session new): its VM, its checkout as /workspace")
	return cmd
}

// Run resolves the run (the outer folder, this clone's names, the builder,
// asb's own path) and hands it to the engine.
func Run(ctx context.Context, o *Options) error {
	wd, err := o.Getwd()
	if err != nil {
		return fmt.Errorf("working directory: %w", err)
	}
	dir, err := outer.Resolve(wd, o.Dir)
	if err != nil {
		return err
	}
	spec := runner.EngineSpec{Dir: dir, Tasks: o.Tasks, Args: o.Args, Cwd: wd,
		Dry: o.Dry, Summary: o.Summary, Force: o.Force, Verbose: o.Verbose, Silent: o.Silent, Yes: o.Yes}
	if o.List || (len(o.Tasks) == 0 && o.Summary == "") {
		if len(o.Tasks) == 0 && !o.List {
			fmt.Fprintln(o.IO.ErrOut, "asb task: name a task to run, e.g. asb task agent")
		}
		spec.List = true
		return o.Engine(ctx, spec, o.IO)
	}
	sum, err := o.decide(ctx, &spec)
	if err != nil || spec.Vars == nil {
		return err // refused, or a Taskfile only the engine reads
	}
	if spec.Warmable() {
		spec.Warm = true
		if err := runWarm(ctx, o, spec, sum); !errors.Is(err, runner.ErrNotWarm) {
			return err
		}
	}
	// The full run: where a killed write's staging files are looked for
	// (a warm run never walks the folder).
	cmdutil.CleanStaleStaging(dir, o.IO.ErrOut)
	return o.Engine(ctx, spec, o.IO)
}

// decide makes the decisions before a run (the folder is trusted, its
// Taskfile has the tasks, msb is there, this clone's names, its secrets
// unchanged) and sets spec.Vars; it returns the Taskfile's sum. A warm
// run takes them from its pass while that holds (warmpass.go). A
// Taskfile asb cannot read leaves spec.Vars nil: the engine reads it with
// go-task, which says where it is broken.
func (o *Options) decide(ctx context.Context, spec *runner.EngineSpec) (string, error) {
	dir := spec.Dir
	start := time.Now().UnixNano()
	if sum, ok, err := o.passed(ctx, spec); ok || err != nil {
		return sum, err
	}
	if !o.Dry && o.Summary == "" {
		if err := gate(ctx, o, dir); err != nil {
			return "", err
		}
	}
	// Unchanged bytes: from their record, no parse (runner/taskfilefacts.go).
	tf, err := runner.ReadTaskfileFacts(dir, spec.Warmable())
	if err != nil {
		return "", o.Engine(ctx, *spec, o.IO)
	}
	names := o.Tasks
	if o.Summary != "" {
		names = append(names, o.Summary)
	}
	if err := tf.Check(names...); err != nil {
		return "", err // before anything is named, recorded or looked up
	}
	if err := host.NeedMSB(o.LookPath, names); err != nil && !o.Dry && o.Summary == "" {
		return "", err // once, with the install command, before any task runs
	}
	id, err := identify(ctx, o, dir, tf)
	if err != nil {
		return "", err
	}
	if spec.Vars, err = o.runVars(ctx, dir, id); err != nil {
		return "", err
	}
	unchanged := true
	if !o.Dry && o.Summary == "" {
		if unchanged, err = rotateSecrets(ctx, o, dir, spec.Vars["VM"]); err != nil {
			return "", err
		}
	}
	if unchanged {
		o.keepPass(*spec, id, tf.Sum, start)
	}
	return tf.Sum, nil
}

// runWarm replays the warm record of spec's run when everything it checked
// still holds (runner/warm.go); runner.ErrNotWarm sends the run to the
// engine.
func runWarm(ctx context.Context, o *Options, spec runner.EngineSpec, taskfileSum string) error {
	r := runner.LoadWarm(spec.WarmKey())
	if r == nil {
		return runner.ErrNotWarm
	}
	var bins []string
	for _, b := range r.Binaries {
		bins = append(bins, b.Path)
	}
	if len(bins) != 2 || bins[0] != spec.Vars["ASB"] || !r.Fresh(taskfileSum, bins) {
		return runner.ErrNotWarm
	}
	if len(spec.Args) > 0 {
		var err error
		if r, err = r.WithArgs(spec.Args); err != nil {
			return runner.ErrNotWarm // the engine says what is wrong with them
		}
	}
	review := startReview(o, spec)
	err := runner.RunWarm(ctx, r, runner.WarmIO{In: o.IO.In, Out: o.IO.Out, Err: o.IO.ErrOut,
		TermOut: termtext.Raw(o.IO.Out), TermErr: termtext.Raw(o.IO.ErrOut), Getenv: o.Getenv})
	if !errors.Is(err, runner.ErrNotWarm) { // ErrVMGone too: nothing ran in the VM, the engine's run reviews
		review() // the agent, asb's child, has returned
	}
	var exit *runner.ExitError
	if errors.As(err, &exit) {
		return &cmdutil.SilentError{Code: exit.Code} // msb's own, as its exit says
	}
	return err
}

// identify returns this clone's names (runner.Identity's vars).
func identify(ctx context.Context, o *Options, dir string, tf runner.TaskfileFacts) (map[string]string, error) {
	if o.Session != "" {
		if _, err := outer.FindSession(dir, o.Session); err != nil {
			return nil, err // before anything is looked up or recorded
		}
	}
	agent := tf.Agent
	if agent == "" {
		return nil, fmt.Errorf("%s/Taskfile.yml sets no AGENT var: is it a Taskfile made by asb init?", dir)
	}
	io := runner.IdentityOptions{Now: o.now(), Record: !o.Dry && o.Summary == ""}
	if io.Record {
		// Only a lost record costs this lookup.
		msb := runner.MSB{Getenv: o.Getenv}
		io.Volumes = func() ([]string, error) { return msb.Volumes(ctx) }
		io.Say = func(s string) { fmt.Fprintln(o.IO.ErrOut, s) }
	}
	id, err := runner.ResolveIdentity(dir, agent, io)
	if err != nil {
		return nil, err
	}
	return id.Vars(), nil
}

// runVars are the vars asb sets over the Taskfile's: this clone's names
// (id), the builder, asb's own path, and a session's.
func (o *Options) runVars(ctx context.Context, dir string, id map[string]string) (map[string]string, error) {
	vars := maps.Clone(id)
	b := runner.DetectBuilder(o.Getenv, o.LookPath, nil)
	vars["BUILDER"] = b.Command
	if b.BuildArgs != "" {
		vars["BUILD_ARGS"] = b.BuildArgs
	}
	if o.Executable != nil {
		if self, err := o.Executable(); err == nil {
			vars["ASB"] = self
		}
	}
	if o.Session != "" {
		if err := sessionVars(ctx, o, dir, vars); err != nil {
			return nil, err
		}
	}
	return vars, nil
}

// completeNames lists the tasks for shell completion (no engine:
// completion runs on every Tab): from the record of the Taskfile's facts
// while it is of the Taskfile's very bytes, as a run takes them, else
// from the Taskfile itself. Completion only looks: it records nothing.
func completeNames(o *Options) ([]string, error) {
	dir, err := cmdutil.FolderDir(o.Getwd, o.Dir)
	if err != nil {
		return nil, err
	}
	f, err := runner.ReadTaskfileFacts(dir, false)
	if err != nil {
		return nil, err
	}
	return f.Names, nil
}

// now is the time of this run: Options.Now's (a test's), or the clock's.
func (o *Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}
