// Package engine is asb's go-task engine: it runs the outer folder's
// Taskfile with go-task embedded as a library, in its own executable
// (cmd/asb-task) so that asb's other commands start without go-task's
// dependencies. asb resolves everything first (the outer folder, this
// clone's names, the builder) and hands the engine a runner.EngineSpec.
package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/agents-sandbox/asb/internal/termtext"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/runner"
	"github.com/agents-sandbox/asb/schema"
	"github.com/go-task/task/v3/taskfile/ast"
	"go.yaml.in/yaml/v3"
)

// Stdio are the streams the engine and the tasks' commands use. Out and
// Err show control characters visibly (internal/termtext: what go-task
// prints, and the output of every command but the last interactive one);
// RawOut and RawErr, when set, are the terminal itself, which the last
// task gets when it is interactive (the agent's interface, vm:shell: the
// channel the user chose to give the VM).
type Stdio struct {
	In             io.Reader
	Out, Err       io.Writer
	RawOut, RawErr io.Writer
}

// Main is asb-task's main: it decodes the spec, runs it, prints an error as
// asb does ("asb: …") and returns the exit code.
func Main(args []string) (code int) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	out, errOut := termtext.New(os.Stdout), termtext.New(os.Stderr)
	defer out.Flush()
	defer errOut.Flush()
	stdio := Stdio{In: os.Stdin, Out: out, Err: errOut, RawOut: os.Stdout, RawErr: os.Stderr}
	defer func() {
		// A panic in go-task: one line, no stack (its frames could hold values).
		if r := recover(); r != nil {
			fmt.Fprintln(stdio.Err, "asb: internal error in the go-task engine; please report it with the command you ran")
			code = 70
		}
	}()
	spec, err := runner.DecodeSpec(args)
	if err == nil {
		err = Run(ctx, spec, stdio)
	}
	if err != nil {
		fmt.Fprintf(stdio.Err, "asb: %s\n", err) // Run's errors are redacted
	}
	return ExitCode(err)
}

// ExitCode is 0 for nil, the failed command's code for a failed task, and
// 1 for any other error.
func ExitCode(err error) int {
	var ec interface{ ExitCode() int }
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ec) && ec.ExitCode() > 0:
		return ec.ExitCode()
	}
	return 1
}

// Run runs spec: lists, summarises, or runs the named tasks. No secret
// value reaches its output or its error (secrets.go).
func Run(ctx context.Context, spec runner.EngineSpec, stdio Stdio) (err error) {
	var secrets []string
	defer func() {
		if err != nil {
			err = redactedError{err: err, msg: redact(err.Error(), secrets)}
		}
	}()
	looking := spec.Looking()
	if looking {
		var flush func()
		if stdio, secrets, flush, err = lookingIO(spec, stdio); err != nil {
			return err
		}
		defer flush()
	}
	tasks, err := NewTasks(TaskOptions{
		Dir: spec.Dir, Stdin: stdio.In, Stdout: stdio.Out, Stderr: stdio.Err, RawStdout: stdio.RawOut, RawStderr: stdio.RawErr,
		Verbose: spec.Verbose, Silent: spec.Silent, Dry: spec.Dry, Force: spec.Force, Yes: spec.Yes,
	})
	if err != nil {
		return err
	}
	if looking {
		disarm(tasks.e.Taskfile)
	}
	if spec.List {
		return tasks.List()
	}
	tasks.SetVars(spec.Vars)
	names, values := secretsOf(spec.Dir, tasks.e.Taskfile)
	secrets = values
	markSecret(tasks.e.Taskfile, names)
	if spec.Summary != "" {
		return tasks.Summary(ctx, spec.Summary)
	}
	var lock Locker
	if !spec.Dry {
		lock = folderLock(spec, stdio.Err)
		// Before go-task sums toolchain/: the certificates are part of the
		// image's inputs, and image:build copying them in mid-run would make
		// the next run see a change.
		if err := outer.SyncHostCerts(spec.Dir, stdio.Err); err != nil {
			return err
		}
	}
	recorded := false
	review := tasks.startReview(spec, stdio.Err)
	err = tasks.RunLocked(ctx, spec.Tasks, spec.Args, lock, func() {
		recorded = true
		tasks.recordWarm(spec)
	})
	review()
	if !recorded && spec.Warm {
		runner.DropWarm(spec.WarmKey()) // the dependencies are not up to date
	}
	return err
}

// folderLock takes the outer folder's run lock, saying so when it waits.
func folderLock(spec runner.EngineSpec, stderr io.Writer) Locker {
	return func(ctx context.Context) (func(), error) {
		what := "asb task " + strings.Join(spec.Tasks, " ")
		l, err := runner.AcquireFolderLock(ctx, spec.Dir, runner.RunLockPath, runner.Holder(what, time.Now()), func(holder string) {
			fmt.Fprintf(stderr, "asb: waiting for another asb task in this folder to finish with the VM (%s)…\n", holder)
		})
		if err != nil {
			return nil, err
		}
		return l.Release, nil
	}
}

// redactedError is an error whose message had secret values taken out; it
// keeps the exit code of the error it stands for.
type redactedError struct {
	err error
	msg string
}

func (e redactedError) Error() string { return e.msg }
func (e redactedError) Unwrap() error { return e.err }

// readAST parses the outer folder's Taskfile with go-task's own parser.
func readAST(dir string) (*ast.Taskfile, error) {
	raw, err := schema.ReadFile(filepath.Join(dir, runner.TaskfileName))
	if err != nil {
		return nil, err
	}
	var tf ast.Taskfile
	if err := yaml.Unmarshal(raw, &tf); err != nil {
		return nil, err
	}
	return &tf, nil
}
