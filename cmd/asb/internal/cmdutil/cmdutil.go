// Package cmdutil holds what every asb command shares: the IO streams, the
// factory of dependencies injected into commands (so tests can swap them),
// and the error kinds that decide the exit code.
package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agents-sandbox/asb/host"
	"github.com/agents-sandbox/asb/internal/termtext"
	"github.com/agents-sandbox/asb/runner"
)

// IOStreams are the standard streams a command uses; tests pass buffers.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// System returns the process's own streams.
func System() *IOStreams {
	return &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
}

// Printing returns s with Out and ErrOut shown through asb's one printer
// (internal/termtext): a control character in what any command prints (a
// diff of the VM's commit, a Dockerfile line, a name from msb's log) is
// shown visibly, never obeyed by the terminal. root wraps the streams of
// every command in it; asb's own colour goes through termtext.Fprint.
func Printing(s *IOStreams) *IOStreams {
	return &IOStreams{In: s.In, Out: termtext.New(s.Out), ErrOut: termtext.New(s.ErrOut)}
}

// Flush writes what the printers hold back (the start of a character a
// later write would have completed).
func (s *IOStreams) Flush() {
	for _, w := range []io.Writer{s.Out, s.ErrOut} {
		if tw, ok := w.(*termtext.Writer); ok {
			_ = tw.Flush()
		}
	}
}

// Factory carries the dependencies of the commands.
type Factory struct {
	IO        *IOStreams
	Templates fs.FS                  // the embedded template tree
	Getwd     func() (string, error) // working directory
	Getenv    func(string) string
	Version   string
	// Executable is the path of the running asb, for tasks that call it.
	Executable func() (string, error)
	Now        func() time.Time
	// Host is the machine asb runs on (asb doctor, the pre-boot check).
	Host host.Host
	// Engine runs a resolved `asb task` (runner/engine, in its own
	// executable: see runner.ExecEngine); tests run it in process.
	Engine func(ctx context.Context, spec runner.EngineSpec, io *IOStreams) error
	// Exec replaces asb with a command (asb secret exec's msb); nil runs it
	// as a child instead (tests).
	Exec func(argv, env []string, dir string) error
	// MachinePolicy is the administrator's policy file,
	// schema.MachinePolicyPath. No environment variable moves it (a user
	// could then leave the administrator's floor): only the test binary
	// sets another.
	MachinePolicy string
}

// UsageError is a mistake in the command line (exit code 2).
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// SilentError has been reported already; it only sets the exit code.
type SilentError struct{ Code int }

func (e *SilentError) Error() string { return "" }

// ExitCoder is an error that carries its own exit code (a failed task
// exits with its command's code).
type ExitCoder interface{ ExitCode() int }

// ExitCode maps an error to the process exit code.
func ExitCode(err error) int {
	var se *SilentError
	var ue *UsageError
	var ec ExitCoder
	switch {
	case err == nil:
		return 0
	case errors.As(err, &se):
		return se.Code
	case errors.As(err, &ue):
		return 2
	case errors.As(err, &ec) && ec.ExitCode() > 0:
		return ec.ExitCode()
	default:
		return 1
	}
}

// FlagError turns a flag parsing error into one line that names the flag,
// the value and what it takes, and points at --help (exit code 2).
func FlagError(c *cobra.Command, err error) error {
	hint := fmt.Sprintf("run '%s --help' for usage", c.CommandPath())
	var iv *pflag.InvalidValueError
	if errors.As(err, &iv) {
		want := "a valid " + iv.GetFlag().Value.Type()
		switch iv.GetFlag().Value.Type() {
		case "int":
			want = "a whole number"
		case "bool":
			want = "true or false"
		}
		return &UsageError{Err: fmt.Errorf("--%s %q is invalid: give %s; %s", iv.GetFlag().Name, iv.GetValue(), want, hint)}
	}
	return &UsageError{Err: fmt.Errorf("%w; %s", err, hint)}
}

// ExactArgs is cobra.ExactArgs with a message a user can act on: what the
// command takes, its usage line and its first example.
func ExactArgs(n int) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) == n {
			return nil
		}
		return arityError(c, fmt.Sprintf("takes %s, got %s", count(n), count(len(args))))
	}
}

// MinimumArgs is cobra.MinimumNArgs with such a message.
func MinimumArgs(n int) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) >= n {
			return nil
		}
		return arityError(c, fmt.Sprintf("takes at least %s, got %s", count(n), count(len(args))))
	}
}

// NoArgs is cobra.NoArgs with such a message.
func NoArgs(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	return arityError(c, fmt.Sprintf("takes no argument, got %s (%s)", count(len(args)), strings.Join(args, " ")))
}

func arityError(c *cobra.Command, what string) error {
	msg := fmt.Sprintf("%s %s\nusage: %s", c.CommandPath(), what, c.UseLine())
	if ex := firstExample(c.Example); ex != "" {
		msg += "\nexample: " + ex
	}
	return &UsageError{Err: errors.New(msg + fmt.Sprintf("\n(%s --help says more)", c.CommandPath()))}
}

func firstExample(ex string) string {
	for l := range strings.SplitSeq(ex, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			return l
		}
	}
	return ""
}

func count(n int) string {
	switch n {
	case 0:
		return "none"
	case 1:
		return "one argument"
	}
	return fmt.Sprintf("%d arguments", n)
}
