package servecmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/schema"
	"github.com/agents-sandbox/asb/serve"
)

// NewAttachCmd returns `asb attach`.
func NewAttachCmd(f *cmdutil.Factory) *cobra.Command { return newAttach(defaults(f)) }

func newAttach(opts *Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "attach [--print] [--notify desktop|bell|off]",
		Short: "Attach a client on this host to the agent's server (asb serve)",
		Long: `Attach to the agent's server in the VM, starting it first as asb serve does.
With the agent's client on this host (OpenCode: opencode attach URL), it
runs here with the password in its environment, never on its command line.
Otherwise, or with --print, it prints what a desktop or web client needs:
the URL, the user and where the password is (never the password).

Several clients attach to one server at once. With notifications on for
the folder (--notify, kept in .asb/serve.json), each client watches the
agent's events and one notification is sent per event, however many
clients see it; a printed attach keeps watching until Ctrl-C.`,
		Example: `  asb attach
  asb attach --print
  asb attach --notify bell`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return RunAttach(cmd.Context(), opts)
		},
	}
	addFlags(cmd, opts)
	cmd.Flags().BoolVar(&opts.Print, "print", false, "print the URL and where the password is, start no client")
	return cmd
}

// RunAttach runs the host's client, or prints what a client needs, with
// the folder's notifications alongside.
func RunAttach(ctx context.Context, o *Options) error {
	f, r, err := ensure(ctx, o)
	if err != nil {
		return err
	}
	agent, err := agentOf(o.Factory, f.Dir)
	if err != nil {
		return err
	}
	n := &serve.Notifier{Mode: modeOf(r.Record), Project: projectOf(f.Dir), Desktop: o.Desktop,
		Bell: o.Factory.IO.ErrOut, Warn: o.Factory.IO.ErrOut,
		Seen: &serve.Dedup{Dir: f.Dir, Now: o.Factory.Now, Window: 30 * time.Second}}
	s := agent.Serve
	var src serve.Source
	if s.Events != "" {
		src = o.Source(r.Server)
	} else if n.Mode != serve.NotifyOff {
		fmt.Fprintf(o.Factory.IO.ErrOut, "asb: %s offers no event stream: no notifications\n", agent.Name)
		n.Mode = serve.NotifyOff
	}
	client := ""
	if len(s.Attach) > 0 && !o.Print {
		client, _ = o.LookPath(s.Attach[0])
	}
	if client == "" {
		w := o.Factory.IO.Out
		fmt.Fprintf(w, "url:      %s\n", r.Server.URL)
		printAccess(w, r)
		if n.Mode == serve.NotifyOff {
			return nil
		}
		fmt.Fprintln(o.Factory.IO.ErrOut, "asb: watching for notifications (Ctrl-C stops)")
		ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
		defer stop()
		return quiet(serve.Watch(ctx, src, n))
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- serve.Watch(wctx, src, n) }()
	argv := append([]string{client}, s.Attach[1:]...)
	review := reviewAround(o.Factory, f.Dir)
	err = o.RunClient(ctx, append(argv, r.Server.URL), []string{s.PasswordEnv + "=" + r.Server.Password})
	cancel()
	review()
	werr := quiet(<-done)
	if err != nil {
		return fmt.Errorf("%s: %w", s.Attach[0], err)
	}
	return werr
}

// quiet drops the end of a watch that was asked to end.
func quiet(err error) error {
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

func projectOf(dir string) string {
	rec, err := schema.ReadRecord(dir)
	if err != nil || rec.Answers.Name == "" {
		return filepath.Base(dir)
	}
	return rec.Answers.Name
}

// reviewAround records workspace/ for review before the client attaches
// (when it has no record yet), and returns what lists, once it detached,
// the files of it that tools on the host run or obey and that the VM
// changed (docs/vm-repositories.md), as asb task agent does.
func reviewAround(f *cmdutil.Factory, dir string) (after func()) {
	table := sync.OnceValues(func() (schema.HostRunTable, error) { return generator.HostRunTable(f.Templates) })
	if err := outer.ReviewBaseline(dir, "", table); err != nil {
		fmt.Fprintf(f.IO.ErrOut, "asb: warning: the files host tools run could not be recorded for review: %v\n", err)
	}
	return func() {
		t, err := table()
		if err == nil {
			_, err = outer.ReviewHostRun(dir, "", t, f.IO.ErrOut)
		}
		if err != nil {
			fmt.Fprintf(f.IO.ErrOut, "asb: warning: the files host tools run could not be reviewed: %v\n", err)
		}
	}
}
