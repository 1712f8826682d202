package networkcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/internal/termtext"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/runner"
)

// LogOptions are the parsed command line of `asb network log`.
type LogOptions struct {
	Factory *cmdutil.Factory
	Dir     string
	Since   time.Duration // 0: the whole log
	JSON    bool
	// Log is where msb's log is read from; nil: msb on PATH.
	Log runner.NetLog
}

func newLogCmd(f *cmdutil.Factory, dir *string) *cobra.Command {
	opts := &LogOptions{Factory: f}
	var since string
	cmd := &cobra.Command{
		Use:   "log",
		Short: "List the hosts msb let the VM reach and refused, from its log",
		Long: `List the destinations of this clone's VM that msb refused (and the few it
logs as let through), grouped by host, with how often and when last, read
from msb's log of the VM (msb logs VM --source system).

msb 0.7.2 logs these decisions only when the VM was created with
--log-level debug; it names the host of a refused DNS lookup and of a
refused TLS connection (its SNI), only the address of a refused plain TCP
connection, and nothing of a refused raw-IP or UDP one. No log line is
printed whole: only hosts, addresses, counts and kinds.`,
		Example: `  asb network log
  asb network log --since 30m
  asb network log --json`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := parseSince(since)
			if err != nil {
				return err
			}
			opts.Dir, opts.Since = *dir, d
			return runLog(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&since, "since", "", "only what was logged in the last DURATION (e.g. 30m, 2h, 1d)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

// parseSince reads --since: a Go duration (90s, 30m, 1h30m) or N days (1d).
func parseSince(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if n, ok := strings.CutSuffix(s, "d"); ok && err != nil {
		days, aerr := strconv.Atoi(n)
		d, err = time.Duration(days)*24*time.Hour, aerr
	}
	if err != nil || d <= 0 {
		return 0, &cmdutil.UsageError{Err: fmt.Errorf("--since %q is not a duration: give e.g. 30m, 2h or 1d", s)}
	}
	return d, nil
}

// destination is what msb logged of one host (or address) and verdict.
type destination struct {
	Host     string    `json:"host"`
	Decision string    `json:"decision"` // allowed or denied
	Count    int       `json:"count"`
	Kinds    []string  `json:"kinds"` // runner.NetEvent kinds, sorted
	Last     time.Time `json:"last"`
	Named    bool      `json:"named"`              // msb logged a name, not only an address
	Redacted bool      `json:"redacted,omitempty"` // the name held a secret's value: not shown
}

// netLog is what `asb network log` and `learn` read: the VM's name, what
// msb logged of it, and this folder's secret values (for the redaction).
type netLog struct {
	runner.NetReport
	Since   time.Time
	secrets []string
}

// readNetLog reads msb's log of this clone's VM.
func readNetLog(ctx context.Context, fac *cmdutil.Factory, f *outer.Folder, src runner.NetLog, since time.Duration) (*netLog, error) {
	now := time.Now
	if fac.Now != nil {
		now = fac.Now
	}
	vm, err := vmName(f.Dir, now())
	if err != nil {
		return nil, err
	}
	if src == nil {
		src = runner.MSB{Getenv: fac.Getenv}
	}
	l := &netLog{secrets: secretValues(f)}
	if since > 0 {
		l.Since = now().Add(-since)
	}
	l.NetReport, err = runner.ReadNetLog(ctx, src, vm, l.Since)
	if err != nil {
		return nil, err
	}
	if !l.Debug() {
		fmt.Fprintf(fac.IO.ErrOut, "asb: warning: %s runs at msb's log level %s, and msb 0.7.2 logs network decisions only at debug: none are recorded. "+
			"Add --log-level debug to the msb create command of vm:create in Taskfile.yml, then asb task vm:create (docs/network.md)\n", vm, levelName(l.LogLevel))
	}
	return l, nil
}

func levelName(l string) string {
	if l == "" {
		return "info (the default)"
	}
	return l
}

// vmName is the name of this clone's VM (runner.ResolveIdentity, as asb
// task names it).
func vmName(dir string, now time.Time) (string, error) {
	tf, err := runner.ReadTaskfile(dir)
	if err != nil {
		return "", err
	}
	agent := tf.StaticVar("AGENT")
	if agent == "" {
		return "", fmt.Errorf("%s/Taskfile.yml sets no AGENT var: is it a Taskfile made by asb init?", dir)
	}
	id, err := runner.ResolveIdentity(dir, agent, runner.IdentityOptions{Now: now})
	if err != nil {
		return "", err
	}
	return id.VM, nil
}

// group sums up events by host (or address) and verdict: the denied
// first, then the most frequent.
func (l *netLog) group() []destination {
	type key struct {
		name    string
		allowed bool
	}
	byKey := map[key]*destination{}
	var order []key
	for _, e := range l.Events {
		name, redacted := e.Name(), carriesSecret(e.Name(), l.secrets)
		if redacted {
			name = "(a name holding a secret's value)"
		}
		k := key{name, e.Allowed}
		d := byKey[k]
		if d == nil {
			d = &destination{Host: name, Decision: "denied", Named: e.Host != "", Redacted: redacted}
			if e.Allowed {
				d.Decision = "allowed"
			}
			byKey[k] = d
			order = append(order, k)
		}
		d.Count++
		if !slices.Contains(d.Kinds, e.Kind) {
			d.Kinds = append(d.Kinds, e.Kind)
			sort.Strings(d.Kinds)
		}
		if e.Time.After(d.Last) {
			d.Last = e.Time
		}
	}
	out := make([]destination, 0, len(order))
	for _, k := range order {
		out = append(out, *byKey[k])
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Decision != b.Decision {
			return a.Decision == "denied"
		}
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.Host < b.Host
	})
	return out
}

func runLog(ctx context.Context, o *LogOptions) error {
	f, err := cmdutil.OpenFolder(o.Factory, o.Dir)
	if err != nil {
		return err
	}
	l, err := readNetLog(ctx, o.Factory, f, o.Log, o.Since)
	if err != nil {
		return err
	}
	dests := l.group()
	w := o.Factory.IO.Out
	if o.JSON {
		enc := json.NewEncoder(termtext.JSON(w))
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			VM           string        `json:"vm"`
			LogLevel     string        `json:"log_level"`
			Since        *time.Time    `json:"since,omitempty"`
			Destinations []destination `json:"destinations"`
		}{l.VM, l.LogLevel, sinceOrNil(l.Since), dests})
	}
	printDestinations(w, l, dests)
	return nil
}

func sinceOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func printDestinations(w io.Writer, l *netLog, dests []destination) {
	span := ""
	if !l.Since.IsZero() {
		span = " since " + l.Since.UTC().Format(time.RFC3339)
	}
	if len(dests) == 0 {
		fmt.Fprintf(w, "msb logged no network decision of %s%s.\n", l.VM, span)
		return
	}
	fmt.Fprintf(w, "Network decisions msb logged for %s%s:\n", l.VM, span)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	verdict := ""
	for _, d := range dests {
		if d.Decision != verdict {
			verdict = d.Decision
			fmt.Fprintf(tw, "\n%s:\n", strings.ToUpper(verdict[:1])+verdict[1:])
			fmt.Fprintln(tw, "  HOST\tCOUNT\tKIND\tLAST")
		}
		fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\n", d.Host, d.Count, strings.Join(d.Kinds, ", "), d.Last.UTC().Format(time.RFC3339))
	}
	_ = tw.Flush()
	if slices.ContainsFunc(dests, func(d destination) bool { return d.Decision == "allowed" }) {
		fmt.Fprintln(w, "\n(msb logs a connection it let through only for TLS and ping: an allowed DNS lookup or plain TCP connection leaves no line.)")
	}
	if slices.ContainsFunc(dests, func(d destination) bool { return d.Decision == "denied" && d.Named }) {
		fmt.Fprintln(w, "\nasb network learn proposes the refused names for network.allow.")
	}
}
