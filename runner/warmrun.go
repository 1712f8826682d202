package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/joho/godotenv"

	"github.com/agents-sandbox/asb/host"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// WarmIO are the streams of a warm run, and the environment msb is looked
// at in (nil: os.Getenv). Out and Err show what asb prints (go-task's
// lines, the checks' output) through asb's printer; TermOut and TermErr,
// when set, are the raw terminal under them, which the last command, the
// agent's own interface, gets as it is (the user gave it the terminal).
type WarmIO struct {
	In               io.Reader
	Out, Err         io.Writer
	TermOut, TermErr io.Writer
	Getenv           func(string) string
}

// flusher is a printer that holds back the start of a character.
type flusher interface{ Flush() error }

// terminal returns the streams the last command gets: the raw ones, once
// what the printers hold has been written, when it is an interactive
// task's (session: the agent's interface, vm:shell); asb's printers
// otherwise, as the engine gives any other task's command (asb task logs
// and vm:exec print what the VM wrote, which must not reach the terminal
// raw however the run was made).
func (w WarmIO) terminal(session bool) (out, errOut io.Writer) {
	out, errOut = w.Out, w.Err
	if !session {
		return out, errOut
	}
	for _, p := range []io.Writer{w.Out, w.Err} {
		if f, ok := p.(flusher); ok {
			_ = f.Flush()
		}
	}
	if w.TermOut != nil {
		out = w.TermOut
	}
	if w.TermErr != nil {
		errOut = w.TermErr
	}
	return out, errOut
}

// ErrNotWarm means the record does not hold any more (a check failed, or
// another run holds the folder's lock): nothing was run but checks, and the
// engine must run the tasks.
var ErrNotWarm = errors.New("not warm")

// ErrVMGone is ErrNotWarm after the last command, msb exec, answered that
// the VM is not there or could not be started: nothing ran in the VM, and
// the engine must make or start it.
var ErrVMGone = fmt.Errorf("%w: msb exec found no VM to run in", ErrNotWarm)

// ExitError is the exit code of the attached last command (Attach), which
// asb exits with, having said nothing of its own.
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// ExitCode is the attached command's own.
func (e *ExitError) ExitCode() int { return e.Code }

// RunWarm runs r: the checks, then (when every one passes) the named tasks'
// commands, as go-task would. It returns ErrNotWarm when a check fails
// before any command ran. While the checks run it holds the run lock
// shared, so that it never acts on a VM another run is changing.
func RunWarm(ctx context.Context, r *WarmRecord, io WarmIO) error {
	lock, err := OpenInFolder(r.Key.Dir, RunLockPath, os.O_RDONLY|os.O_CREATE)
	if err != nil {
		return ErrNotWarm
	}
	defer lock.Close()
	if syscall.Flock(int(lock.Fd()), syscall.LOCK_SH|syscall.LOCK_NB) != nil {
		return ErrNotWarm // a run is changing the VM: the engine waits for it
	}
	msb := MSB{Getenv: io.Getenv}
	if !checksHold(ctx, r.Checks, msb) {
		return ErrNotWarm
	}
	if r.Session {
		_ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	}
	for _, c := range r.Checks {
		if c.Kind == "uptodate" {
			fmt.Fprintln(io.Err, c.Log)
		}
	}
	for i, c := range r.Cmds {
		if c.Log != "" {
			fmt.Fprintln(io.Err, c.Log)
		}
		if i == len(r.Cmds)-1 && c.Argv != nil && !c.IgnoreError {
			// The last command, when it is one plain command (Judged),
			// runs as asb's child with the terminal (a shell runs its last
			// command as directly): no shell between msb exec and the user.
			return attachLast(r, c, c.Argv, io)
		}
		if err := runCmd(ctx, c, io); err != nil {
			return err
		}
	}
	return nil
}

// runCmd runs one of the named tasks' commands through the shell.
func runCmd(ctx context.Context, c WarmStep, io WarmIO) error {
	err := runStep(ctx, c, io.In, io.Out, io.Err)
	var status interp.ExitStatus
	switch {
	case err == nil:
	case errors.As(err, &status) && c.IgnoreError:
	case ctx.Err() != nil:
		return fmt.Errorf("interrupted: %w", ctx.Err())
	case errors.As(err, &status):
		return &TaskFailedError{Task: c.Task, Code: int(status),
			Err: fmt.Errorf("its command failed (exit status %d); see its output above", int(status))}
	default:
		return &TaskFailedError{Task: c.Task, Code: 1, Err: err}
	}
	return nil
}

// attachLast runs the last command as asb's child (Attach). When it is
// msb exec into the record's VM and msb answers that the VM is not there
// or could not be started (the VM went between the checks and the exec,
// or its lock is held by a boot still in flight, which the engine's
// vm:start ends), nothing ran in the VM: ErrVMGone sends the run to the
// engine, which makes or starts it and attaches. (A command in the VM that printed
// msb's very answer first on its standard error and exited 1 would run
// once more that way: the engine's run does not watch for it.)
func attachLast(r *WarmRecord, c WarmStep, argv []string, io WarmIO) error {
	vm := r.Key.Vars["VM"]
	var answers []string
	if len(argv) > 2 && filepath.Base(argv[0]) == "msb" && argv[1] == "exec" && vm != "" && slices.Contains(argv, vm) {
		answers = []string{host.MSBNotFound(vm), host.MSBFailedStart(vm), host.MSBNotStartable(vm)}
	}
	out, errOut := io.terminal(r.Session)
	code, answered, err := Attach(argv, stepEnv(c), c.Dir, io.In, out, errOut, answers)
	switch {
	case err != nil:
		return &TaskFailedError{Task: c.Task, Code: code, Err: err}
	case answered:
		fmt.Fprintf(io.Err, "asb: %s is not running (msb exec could not reach it): starting it\n", vm)
		return ErrVMGone
	case code != 0:
		return &ExitError{Code: code}
	}
	return nil
}

// runStep runs one command with mvdan/sh, as go-task does: errexit on, the
// Taskfile's set and shopt options, the OS environment plus the task's env
// and dotenv values that the environment does not set.
func runStep(ctx context.Context, s WarmStep, in io.Reader, out, errOut io.Writer) error {
	params := []string{"-e"}
	for _, o := range s.Set {
		if o == "e" || o == "errexit" {
			continue
		}
		if len(o) == 1 {
			params = append(params, "-"+o)
		} else {
			params = append(params, "-o", o)
		}
	}
	var bash []string
	if len(s.Shopt) > 0 {
		bash = append([]string{"-s"}, s.Shopt...)
	}
	r, err := interp.New(
		interp.Params(params...),
		interp.BashOpts(bash...),
		interp.Env(expand.ListEnviron(stepEnv(s)...)),
		interp.StdIO(in, out, errOut),
		interp.Dir(s.Dir),
	)
	if err != nil {
		return err
	}
	prog, err := syntax.NewParser().Parse(strings.NewReader(s.Cmd), "")
	if err != nil {
		return err
	}
	return r.Run(ctx, prog)
}

// stepEnv is go-task's environment of a command: os.Environ, then each of
// the task's env entries and dotenv values the environment does not have.
func stepEnv(s WarmStep) []string {
	env := os.Environ()
	set := map[string]bool{}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		set[k] = true
	}
	add := func(kv string) {
		if k, _, ok := strings.Cut(kv, "="); ok && !set[k] {
			set[k] = true
			env = append(env, kv)
		}
	}
	for _, kv := range s.Env {
		add(kv)
	}
	for _, f := range s.Dotenv {
		vals, err := godotenv.Read(f) // a missing file is skipped, as go-task does
		if err != nil {
			continue
		}
		keys := make([]string, 0, len(vals))
		for k := range vals {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			add(k + "=" + vals[k])
		}
	}
	return env
}

// checksHold runs the checks (status commands and preconditions) at once,
// as go-task runs a task's dependencies, and reports whether all passed. A
// check of a VM that msb's lock shows running passes without a process
// (VMCheck), and one the record marks as a test for a folder is a stat
// (DirCheck, judged when the record was made).
func checksHold(ctx context.Context, checks []WarmStep, msb MSB) bool {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	failed := make(chan struct{}, len(checks))
	var wg sync.WaitGroup
	for _, c := range checks {
		if c.Kind == "uptodate" || c.VM != "" && msb.IsRunning(c.VM) {
			continue // a line to print; a check the running VM passes
		}
		if p := c.IsDir; p != "" {
			if !filepath.IsAbs(p) {
				p = filepath.Join(c.Dir, p)
			}
			if !isDir(p) {
				return false
			}
			continue // a stat answers it, as the shell's test would
		}
		wg.Go(func() {
			if runStep(ctx, c, nil, nil, nil) != nil {
				failed <- struct{}{}
				cancel()
			}
		})
	}
	wg.Wait()
	return len(failed) == 0
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// plainArgv returns the words of cmd when it is a single simple command of
// literal words (quoted or not): no expansion, redirection, pipe,
// assignment or second command, so running it is exec'ing argv in dir.
// The program is resolved on PATH as the shell would.
func plainArgv(cmd string) ([]string, bool) {
	f, err := syntax.NewParser().Parse(strings.NewReader(cmd), "")
	if err != nil || len(f.Stmts) != 1 {
		return nil, false
	}
	st := f.Stmts[0]
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || st.Negated || st.Background || st.Coprocess || len(st.Redirs) > 0 || len(call.Assigns) > 0 || len(call.Args) == 0 {
		return nil, false
	}
	var argv []string
	for _, w := range call.Args {
		lit, ok := literal(w)
		if !ok {
			return nil, false
		}
		argv = append(argv, lit)
	}
	if interp.IsBuiltin(argv[0]) || strings.Contains(argv[0], "=") {
		return nil, false // the shell's own (exit, cd, echo…): no program to exec
	}
	return argv, true
}

// literal is the value of a word made only of literal parts.
func literal(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			v, ok := unescape(p.Value)
			if !ok {
				return "", false
			}
			b.WriteString(v)
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok || strings.ContainsAny(lit.Value, "\\") {
					return "", false
				}
				b.WriteString(lit.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// unescape is the value of an unquoted literal: a backslash keeps the next
// character as it is (go-task quotes a single quote inside an argument as
// an escaped quote between two quoted parts), and a backslash before a
// newline joins the lines. A glob, brace or tilde left unescaped is the
// shell's to expand: not a literal.
func unescape(lit string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(lit); i++ {
		switch c := lit[i]; {
		case c == '\\' && i+1 < len(lit):
			i++
			if lit[i] != '\n' {
				b.WriteByte(lit[i])
			}
		case c == '\\' || strings.IndexByte("*?[{~", c) >= 0:
			return "", false
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}
