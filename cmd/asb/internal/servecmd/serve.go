// Package servecmd is `asb serve` and `asb attach`: the agent's server
// running in the VM, reachable on a port of the host's 127.0.0.1 only,
// behind a password kept in secrets.env; clients attached to it; the
// agent's events as notifications (package serve does the work).
package servecmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/proc"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/schema"
	"github.com/agents-sandbox/asb/serve"
)

// Options are the parsed command line of `asb serve` and `asb attach`,
// and what they run (tests swap the functions).
type Options struct {
	Factory  *cmdutil.Factory
	Dir      string
	Notify   string
	Recreate bool
	Print    bool

	RunTask   func(ctx context.Context, dir, name string) error
	Up        func(context.Context, serve.Server) (bool, error)
	Free      func(int) bool
	Source    func(serve.Server) serve.Source
	Desktop   func(ctx context.Context, title, body string) error
	LookPath  func(string) (string, error)
	RunClient func(ctx context.Context, argv, env []string) error
	Wait      time.Duration
}

func defaults(f *cmdutil.Factory) *Options {
	return &Options{Factory: f, RunTask: childTask(f), Up: serve.Up, Free: serve.BindFree,
		Source:  func(s serve.Server) serve.Source { return serve.OpenCodeSource{Server: s} },
		Desktop: serve.DesktopNotify, LookPath: exec.LookPath, RunClient: runClient, Wait: 60 * time.Second}
}

// NewCmd returns `asb serve`.
func NewCmd(f *cmdutil.Factory) *cobra.Command { return newServe(defaults(f)) }

func newServe(opts *Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve [--notify desktop|bell|off] [--recreate]",
		Short: "Run the agent's server in the VM, for clients on this host (asb attach)",
		Long: `Run the agent's server in the VM (OpenCode: opencode serve), reachable from
this host only, on 127.0.0.1 and a port asb picks for this folder: never a
port another folder holds or anything listens on. The pick is kept in
.asb/serve.json (git-ignored) and passed to msb create, which takes ports
only when it creates a VM: a VM created before is created again with
--recreate (/workspace and the home volume stay).

The server asks for a password (HTTP basic auth, user opencode). asb makes
one into secrets.env (ASB_SERVE_PASSWORD, mode 0600) and hands it to the
server on its stdin, so it is on no command line and in no other file;
asb never prints it. A server that runs already is found, not started
again. Clients: asb attach, or a desktop or web client given the URL.

A preset without a server mode (every one but OpenCode today) says so.`,
		Example: `  asb serve
  asb serve --notify desktop
  asb attach`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return RunServe(cmd.Context(), opts)
		},
	}
	addFlags(cmd, opts)
	return cmd
}

func addFlags(cmd *cobra.Command, o *Options) {
	cmdutil.AddDirFlag(cmd, &o.Dir)
	cmd.Flags().StringVar(&o.Notify, "notify", "", "notifications of this folder's agent (waits for input, done, failed): desktop, bell or off; kept for the folder")
	cmd.Flags().BoolVar(&o.Recreate, "recreate", false, "create the VM again when it lacks the server's port forward")
	_ = cmd.RegisterFlagCompletionFunc("notify", cobra.FixedCompletions([]string{"desktop", "bell", "off"}, cobra.ShellCompDirectiveNoFileComp))
}

// RunServe makes the server run and says how to reach it.
func RunServe(ctx context.Context, o *Options) error {
	_, r, err := ensure(ctx, o)
	if err != nil {
		return err
	}
	w := o.Factory.IO.Out
	if r.Started {
		fmt.Fprintf(w, "serving at %s\n", r.Server.URL)
	} else {
		fmt.Fprintf(w, "already serving at %s\n", r.Server.URL)
	}
	printAccess(w, r)
	return nil
}

func printAccess(w io.Writer, r *serve.Running) {
	fmt.Fprintf(w, "user:     %s\n", r.Server.User)
	fmt.Fprintf(w, "password: %s in secrets.env (or your environment); asb never prints it\n", serve.PasswordVar)
	fmt.Fprintln(w, "attach:   asb attach (or a desktop or web client given the URL)")
	fmt.Fprintf(w, "notify:   %s\n", modeOf(r.Record))
}

func modeOf(r *serve.Record) string {
	if r.Notify == "" {
		return serve.NotifyOff
	}
	return r.Notify
}

// ensure opens the folder, finds its preset, keeps --notify and runs
// serve.Ensure.
func ensure(ctx context.Context, o *Options) (*outer.Folder, *serve.Running, error) {
	mode, err := serve.ParseMode(o.Notify)
	if o.Notify != "" && err != nil {
		return nil, nil, &cmdutil.UsageError{Err: fmt.Errorf("--%w", err)}
	}
	f, err := cmdutil.OpenFolder(o.Factory, o.Dir)
	if err != nil {
		return nil, nil, err
	}
	agent, err := agentOf(o.Factory, f.Dir)
	if err != nil {
		return nil, nil, err
	}
	d := serve.Deps{Getenv: o.Factory.Getenv, Up: o.Up, Free: o.Free, Wait: o.Wait, Recreate: o.Recreate, Out: o.Factory.IO.ErrOut,
		RunTask: func(ctx context.Context, name string) error { return o.RunTask(ctx, f.Dir, name) }}
	r, err := serve.Ensure(ctx, f, agent, d)
	if err != nil {
		return nil, nil, err
	}
	if o.Notify != "" && mode != modeOf(r.Record) {
		r.Record.Notify = mode
		if err := serve.Save(f.Dir, r.Record); err != nil {
			return nil, nil, err
		}
	}
	return f, r, nil
}

func agentOf(f *cmdutil.Factory, dir string) (schema.Agent, error) {
	rec, err := schema.ReadRecord(dir)
	if err != nil {
		return schema.Agent{}, err
	}
	return generator.LoadAgent(f.Templates, rec.Agent)
}

// childTask runs `asb task -d DIR NAME` as a child, its output on stderr.
func childTask(f *cmdutil.Factory) func(ctx context.Context, dir, name string) error {
	return func(ctx context.Context, dir, name string) error {
		self, err := f.Executable()
		if err != nil {
			return err
		}
		// Should serve die (kill -9 included), the task is asked to end,
		// as at serve's own SIGTERM: killed, its engine would leave the
		// boot it started running (msb create, its machine).
		cmd := proc.Graceful(ctx, self, "task", "-d", dir, name)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, f.IO.ErrOut, f.IO.ErrOut
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("asb task %s: %w", name, err)
		}
		return nil
	}
}

// runClient runs the host's client on this terminal.
func runClient(ctx context.Context, argv, env []string) error {
	cmd := proc.Graceful(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	return cmd.Run()
}
