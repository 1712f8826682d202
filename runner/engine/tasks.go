package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/agents-sandbox/asb/runner"
	"github.com/go-task/task/v3"
	taskerrors "github.com/go-task/task/v3/errors"
	"github.com/go-task/task/v3/taskfile/ast"
	"mvdan.cc/sh/v3/syntax"
)

// TaskOptions configure one run of the outer folder's Taskfile.
type TaskOptions struct {
	Dir    string // the outer folder (holds Taskfile.yml)
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// RawStdout and RawStderr are the terminal, for the last task when it
	// is interactive; nil: it gets Stdout and Stderr too.
	RawStdout, RawStderr io.Writer
	Verbose              bool
	Silent               bool
	Dry                  bool // print the commands of the tasks and their deps; run nothing
	Force                bool
	Yes                  bool // answer yes to prompts (home:reset)
	Color                bool
}

// Tasks wraps go-task's executor, embedded as a library: no task binary is
// needed, and nothing in it may exit the process (asb never enables watch
// mode nor go-task's own signal handling; Ctrl-C cancels ctx instead).
type Tasks struct {
	opts TaskOptions
	e    *task.Executor
}

// NewTasks reads and compiles the Taskfile of opts.Dir.
func NewTasks(opts TaskOptions) (*Tasks, error) {
	e := task.NewExecutor(
		task.WithDir(opts.Dir),
		task.WithStdin(opts.Stdin),
		task.WithStdout(opts.Stdout),
		task.WithStderr(opts.Stderr),
		task.WithVerbose(opts.Verbose),
		task.WithSilent(opts.Silent),
		task.WithDry(opts.Dry),
		task.WithForce(opts.Force),
		// A dry run prints every command and runs none: not even the status
		// checks, which go-task would otherwise run to decide.
		task.WithForceAll(opts.Dry),
		task.WithAssumeYes(opts.Yes),
		task.WithColor(opts.Color),
		task.WithOffline(true), // an outer folder's Taskfile includes nothing remote
		task.WithTimeout(10*time.Second),
	)
	if err := e.Setup(); err != nil {
		return nil, explainSetup(opts.Dir, err)
	}
	return &Tasks{opts: opts, e: e}, nil
}

// SetVars sets vars over the Taskfile's own (asb's identity and builder),
// as `task NAME=value` would.
func (t *Tasks) SetVars(vars map[string]string) {
	names := make([]string, 0, len(vars))
	for k := range vars {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		t.e.Taskfile.Vars.Set(k, ast.Var{Value: vars[k]})
	}
	if s := vars["SESSION"]; s != "" {
		// What `$(asb msb-conf)` sees of a session's run, which gets no
		// Taskfile var: the folder's own flags stay off the session's VM.
		t.SetEnv(runner.SessionEnv, s)
	}
}

// SetEnv sets the environment variable k of every command the Taskfile
// runs to v.
func (t *Tasks) SetEnv(k, v string) {
	if t.e.Taskfile.Env == nil {
		t.e.Taskfile.Env = ast.NewVars()
	}
	t.e.Taskfile.Env.Set(k, ast.Var{Value: v})
}

// Names lists the tasks of the Taskfile, sorted.
func (t *Tasks) Names() []string {
	var names []string
	for name := range t.e.Taskfile.Tasks.Keys(nil) {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// Has reports whether the Taskfile defines name.
func (t *Tasks) Has(name string) bool { return slices.Contains(t.Names(), name) }

// Check returns an UnknownTaskError for the first name the Taskfile lacks.
func (t *Tasks) Check(names ...string) error {
	for _, n := range names {
		if !t.Has(n) {
			return &runner.UnknownTaskError{Name: n, Known: t.Names()}
		}
	}
	return nil
}

// List prints the tasks with their descriptions, as `task --list` does.
func (t *Tasks) List() error {
	found, err := t.e.ListTasks(task.ListOptions{ListOnlyTasksWithDescriptions: true})
	if err != nil {
		return fmt.Errorf("list tasks: %w", err)
	}
	if !found {
		return errors.New("no task in Taskfile.yml has a description (desc:)")
	}
	return nil
}

// Summary prints what name does, its dependencies and its commands.
func (t *Tasks) Summary(ctx context.Context, name string) error {
	if err := t.Check(name); err != nil {
		return err
	}
	t.e.Summary = true
	defer func() { t.e.Summary = false }()
	return t.e.Run(ctx, &task.Call{Task: name})
}

// Locker takes the outer folder's run lock; the returned func drops it.
type Locker func(ctx context.Context) (release func(), err error)

// RunLocked runs the named tasks in two steps: first the other named tasks
// (in order) and the last one's dependencies, then the last task itself,
// whose dependencies are run-once for this run, so they are not checked
// twice. ready, when set, is called between the two: everything the last
// task needs is up to date. With lock, the run holds the outer folder's run
// lock, so that two runs in one outer folder never create two VMs or two
// home volumes; when the last task is interactive (agent, vm:shell: a
// session that may last for hours), the lock is dropped before its
// commands run, so a second run waits only for the VM, then attaches too.
func (t *Tasks) RunLocked(ctx context.Context, names []string, args []string, lock Locker, ready func()) error {
	if err := t.Check(names...); err != nil {
		return err
	}
	if err := t.setCLIVars(args); err != nil {
		return err
	}
	calls := make([]*task.Call, 0, len(names))
	for _, n := range names {
		calls = append(calls, &task.Call{Task: n})
	}
	release := func() {}
	if lock != nil {
		var err error
		if release, err = lock(ctx); err != nil {
			return err
		}
	}
	defer release()
	last := calls[len(calls)-1]
	deps, session := t.deps(last)
	t.runOnce(deps)
	// (No call at all would be go-task's "default" task.)
	if before := append(slices.Clone(calls[:len(calls)-1]), deps...); len(before) > 0 {
		if err := t.e.Run(ctx, before...); err != nil {
			err = explainRun(ctx, err, t.opts.Yes)
			var f *runner.TaskFailedError
			if errors.As(err, &f) && slices.ContainsFunc(deps, func(d *task.Call) bool { return d.Task == f.Task || slices.Contains(f.NeededBy, d.Task) }) {
				f.NeededBy = append([]string{last.Task}, f.NeededBy...) // what they were run for
			}
			return err
		}
	}
	if ready != nil {
		ready()
	}
	if session {
		release()
		t.rawStreams()
	}
	return explainRun(ctx, t.e.Run(ctx, last), t.opts.Yes)
}

// rawStreams gives the commands of the task run next the terminal itself:
// an interactive task's program (the agent's interface, a shell in the VM)
// is the user's chosen channel to the VM, and needs a terminal of its own.
// go-task's own lines still go through its logger, made with the
// sanitizing streams. The dependencies have run by then: no other command
// writes meanwhile.
func (t *Tasks) rawStreams() {
	if t.opts.RawStdout != nil && t.opts.RawStderr != nil {
		t.e.Stdout, t.e.Stderr = t.opts.RawStdout, t.opts.RawStderr
	}
}

// deps returns the dependencies of c, and whether c is interactive.
func (t *Tasks) deps(c *task.Call) (deps []*task.Call, interactive bool) {
	ct, err := t.e.CompiledTask(c)
	if err != nil {
		return nil, false // the run itself reports it
	}
	for _, d := range ct.Deps {
		deps = append(deps, &task.Call{Task: d.Task, Vars: d.Vars, Silent: d.Silent, Indirect: true})
	}
	return deps, ct.Interactive
}

// runOnce marks calls and every task they depend on run-once, in this
// executor's copy of the Taskfile only.
func (t *Tasks) runOnce(calls []*task.Call) {
	seen := map[string]bool{}
	var mark func(name string)
	mark = func(name string) {
		if seen[name] {
			return
		}
		seen[name] = true
		at, ok := t.e.Taskfile.Tasks.Get(name)
		if !ok {
			return
		}
		at.Run = "once"
		for _, d := range at.Deps {
			mark(d.Task)
		}
	}
	for _, c := range calls {
		mark(c.Task)
	}
}

func (t *Tasks) setCLIVars(args []string) error {
	quoted := make([]string, 0, len(args))
	for _, a := range args {
		q, err := syntax.Quote(a, syntax.LangBash)
		if err != nil {
			return fmt.Errorf("argument %q cannot be passed to a shell: %w", a, err)
		}
		quoted = append(quoted, q)
	}
	special := ast.NewVars()
	special.Set("CLI_ARGS", ast.Var{Value: strings.Join(quoted, " ")})
	special.Set("CLI_ARGS_LIST", ast.Var{Value: args})
	special.Set("CLI_FORCE", ast.Var{Value: t.opts.Force})
	special.Set("CLI_SILENT", ast.Var{Value: t.opts.Silent})
	special.Set("CLI_VERBOSE", ast.Var{Value: t.opts.Verbose})
	special.Set("CLI_ASSUME_YES", ast.Var{Value: t.opts.Yes})
	t.e.Taskfile.Vars.ReverseMerge(special, nil)
	return nil
}

func explainSetup(dir string, err error) error {
	var nf taskerrors.TaskfileNotFoundError
	if errors.As(err, &nf) {
		return fmt.Errorf("no Taskfile.yml in %s: run asb task inside an outer folder made by asb init (or pass --dir)", dir)
	}
	return fmt.Errorf("read Taskfile.yml: %w", err)
}

func explainRun(ctx context.Context, err error, yes bool) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted: %w", ctx.Err())
	}
	msg := err.Error()
	if strings.Contains(msg, "no terminal") && !yes {
		return fmt.Errorf("%w: this task asks before it deletes anything; run it in a terminal or pass --yes", err)
	}
	// go-task nests one TaskRunError per task in the chain; name the task
	// that failed, and the chain that needed it.
	var chain []string
	var inner *taskerrors.TaskRunError
	for e := err; ; {
		var run *taskerrors.TaskRunError
		if !errors.As(e, &run) {
			break
		}
		chain = append(chain, run.TaskName)
		inner, e = run, run.Err
	}
	if inner == nil {
		return err
	}
	cause := inner.Err
	var ee interface{ ExitCode() int }
	if errors.As(cause, &ee) || strings.HasPrefix(cause.Error(), "exit status") {
		cause = fmt.Errorf("its command failed (%w); see its output above", cause)
	}
	f := &runner.TaskFailedError{Task: inner.TaskName, Code: inner.TaskExitCode(), Err: cause}
	if len(chain) > 1 {
		f.NeededBy = chain[:len(chain)-1]
	}
	return f
}
