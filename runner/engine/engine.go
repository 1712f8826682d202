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

	"github.com/agents-sandbox/asb/runner"
)

// Stdio are the streams the engine and the tasks' commands use.
type Stdio struct {
	In       io.Reader
	Out, Err io.Writer
}

// Main is asb-task's main: it decodes the spec, runs it, prints an error as
// asb does ("asb: …") and returns the exit code.
func Main(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	stdio := Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}
	spec, err := runner.DecodeSpec(args)
	if err == nil {
		err = Run(ctx, spec, stdio)
	}
	if err != nil {
		fmt.Fprintf(stdio.Err, "asb: %s\n", err)
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

// Run runs spec: lists, summarises, or runs the named tasks.
func Run(ctx context.Context, spec runner.EngineSpec, stdio Stdio) error {
	tasks, err := NewTasks(TaskOptions{
		Dir: spec.Dir, Stdin: stdio.In, Stdout: stdio.Out, Stderr: stdio.Err,
		Verbose: spec.Verbose, Silent: spec.Silent, Dry: spec.Dry, Force: spec.Force, Yes: spec.Yes,
	})
	if err != nil {
		return err
	}
	if spec.List {
		return tasks.List()
	}
	tasks.SetVars(spec.Vars)
	if spec.Summary != "" {
		return tasks.Summary(ctx, spec.Summary)
	}
	var lock Locker
	if !spec.Dry {
		lock = folderLock(spec, stdio.Err)
	}
	recorded := false
	err = tasks.RunLocked(ctx, spec.Tasks, spec.Args, lock, func() {
		recorded = true
		tasks.recordWarm(spec)
	})
	if !recorded && spec.Warm {
		runner.DropWarm(spec.WarmKey()) // the dependencies are not up to date
	}
	return err
}

// folderLock takes the outer folder's run lock, saying so when it waits.
func folderLock(spec runner.EngineSpec, stderr io.Writer) Locker {
	return func(ctx context.Context) (func(), error) {
		what := "asb task " + strings.Join(spec.Tasks, " ")
		l, err := runner.AcquireLock(ctx, filepath.Join(spec.Dir, runner.RunLockPath), runner.Holder(what, time.Now()), func(holder string) {
			fmt.Fprintf(stderr, "asb: waiting for another asb task in this folder to finish with the VM (%s)…\n", holder)
		})
		if err != nil {
			return nil, err
		}
		return l.Release, nil
	}
}
