package networkcmd

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/runner"
	"github.com/agents-sandbox/asb/schema"
)

// LearnOptions are the parsed command line of `asb network learn`.
type LearnOptions struct {
	Factory *cmdutil.Factory
	Dir     string
	Since   time.Duration
	Yes     bool
	Log     runner.NetLog // nil: msb on PATH
	// IsTerminal says whether the answers can be asked for; nil: whether
	// the input is a terminal.
	IsTerminal func() bool
}

func newLearnCmd(f *cmdutil.Factory, dir *string) *cobra.Command {
	opts := &LearnOptions{Factory: f}
	var since string
	cmd := &cobra.Command{
		Use:   "learn",
		Short: "Propose the hosts msb refused for the allow list, and add those you accept",
		Long: `Read msb's log of this clone's VM (as asb network log does) and propose
each host name msb refused for network.allow, with how often it was refused
and what asked for it (a DNS lookup, a TLS connection). Ask y/n for each
on the terminal; --yes accepts them all. Without a terminal and without
--yes, list them and change nothing.

Never proposed: an IP address, a private or local name (localhost, *.local,
*.internal, reverse lookups), a wildcard, a name holding a secret's value,
a host sandbox.yaml denies on purpose (network.deny) or allows already, and
what msb refused for another reason than the allow list (a name that
resolved to a private address, a lookup sent to another resolver, the
strict hostname check). The accepted hosts are added as asb network allow
adds them (comments kept, checked before writing). The VM keeps its old
allow list until it is created again: asb task vm:create (or the next asb
task agent) does that.`,
		Example: `  asb network learn
  asb network learn --since 1h --yes`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := parseSince(since)
			if err != nil {
				return err
			}
			opts.Dir, opts.Since = *dir, d
			return runLearn(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&since, "since", "", "only what was logged in the last DURATION (e.g. 30m, 2h, 1d)")
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "accept every proposed host without asking")
	return cmd
}

// proposal is a refused host learn may propose, or says why it does not.
type proposal struct {
	destination
	skip string // why it is not proposed; "" when it is
}

func runLearn(ctx context.Context, o *LearnOptions) error {
	f, release, err := cmdutil.EditFolder(ctx, o.Factory, o.Dir, "asb network learn")
	if err != nil {
		return err
	}
	defer release()
	p, _, err := currentEgress(f)
	if err != nil {
		return err
	}
	l, err := readNetLog(ctx, o.Factory, f, o.Log, o.Since)
	if err != nil {
		return err
	}
	w := o.Factory.IO.Out
	props := propose(l.group(), p)
	if p.Form == "none" && len(props) > 0 {
		fmt.Fprintln(w, "network is none: the VM reaches no host, and asb network learn only adds to an allow list; to let the VM reach some hosts write network: {allow: [HOST, …]} in sandbox.yaml")
		return nil
	}
	printProposals(w, l, props)
	var hosts []string
	for _, pr := range props {
		if pr.skip == "" {
			hosts = append(hosts, pr.Host)
		}
	}
	if len(hosts) == 0 {
		return nil
	}
	accepted, asked := o.accept(hosts)
	if !asked {
		fmt.Fprintln(w, "\nNothing was changed: there is no terminal to ask on. asb network learn --yes allows them all; asb network allow HOST… allows some.")
		return nil
	}
	if len(accepted) == 0 {
		fmt.Fprintln(w, "\nNothing was accepted; sandbox.yaml was not changed.")
		return nil
	}
	return allowLearned(o, f, accepted)
}

// propose decides, for each refused destination, whether to propose it.
func propose(dests []destination, p schema.EgressPolicy) []proposal {
	var out []proposal
	for _, d := range dests {
		if d.Decision != "denied" {
			continue
		}
		pr := proposal{destination: d, skip: skipReason(d, p)}
		out = append(out, pr)
	}
	return out
}

// learnable are the kinds of refusal the allow list decides.
var learnable = []string{"dns", "tls"}

func skipReason(d destination, p schema.EgressPolicy) string {
	switch {
	case d.Redacted:
		return "it holds the value of a secret: a guest may be smuggling it out"
	case !d.Named:
		return "msb logged only its address, and network.allow takes names"
	case !slices.ContainsFunc(d.Kinds, func(k string) bool { return slices.Contains(learnable, k) }):
		return "msb refused it for another reason than the allow list (" + strings.Join(d.Kinds, ", ") + ", see docs/network.md)"
	case strings.Contains(d.Host, "*"):
		// The name the guest asked for, * and all: in network.allow it
		// would be a whole domain (msb's suffix), chosen by the VM.
		return "it is a wildcard, which would allow a whole domain; learn proposes names only (asb network allow *.DOMAIN adds one on purpose)"
	case schema.Host(d.Host) != nil:
		return "it is not a domain name network.allow can take"
	case privateName(d.Host):
		return "it is a private or local name, which stays off the allow list"
	}
	dec := p.Decide(d.Host, schema.DefaultCheckPort)
	switch {
	case dec.Allowed:
		return "sandbox.yaml allows it now (" + dec.Why + "); the VM was created before: asb task vm:create"
	case dec.Rule != "":
		return fmt.Sprintf("network.deny entry %q denies it on purpose (asb network allow %s undoes that)", dec.Rule, d.Host)
	}
	return ""
}

// privateNames are the suffixes of names that are not on the internet.
var privateNames = []string{"localhost", "local", "internal", "lan", "home.arpa", "in-addr.arpa", "ip6.arpa", "localdomain", "test", "invalid", "example"}

func privateName(h string) bool {
	return slices.ContainsFunc(privateNames, func(s string) bool { return schema.MatchesSuffix(h, s) })
}

func printProposals(w io.Writer, l *netLog, props []proposal) {
	if len(props) == 0 {
		fmt.Fprintf(w, "msb logged no refused host of %s: nothing to learn.\n", l.VM)
		return
	}
	var skipped []proposal
	fmt.Fprintf(w, "Hosts msb refused to %s:\n", l.VM)
	for _, pr := range props {
		if pr.skip != "" {
			skipped = append(skipped, pr)
			continue
		}
		fmt.Fprintf(w, "  %s  refused %s (%s)\n", pr.Host, times(pr.Count), kindWords(pr.Kinds))
	}
	if len(skipped) == len(props) {
		fmt.Fprintln(w, "  none to propose")
	}
	if len(skipped) > 0 {
		fmt.Fprintln(w, "Not proposed:")
		for _, pr := range skipped {
			fmt.Fprintf(w, "  %s: %s\n", pr.Host, pr.skip)
		}
	}
}

func times(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}

var kindNames = map[string]string{"dns": "DNS lookup", "tls": "TLS connection"}

func kindWords(kinds []string) string {
	var out []string
	for _, k := range kinds {
		if n := kindNames[k]; n != "" {
			out = append(out, n)
		}
	}
	return strings.Join(out, ", ")
}

// accept asks for each host (all with --yes); asked is false when there
// is no terminal to ask on.
func (o *LearnOptions) accept(hosts []string) (accepted []string, asked bool) {
	w := o.Factory.IO.Out
	if o.Yes {
		fmt.Fprintf(w, "\n--yes: allowing %s\n", strings.Join(hosts, ", "))
		return hosts, true
	}
	isTerm := o.IsTerminal
	if isTerm == nil {
		isTerm = func() bool { return cmdutil.IsTerminal(o.Factory.IO.In) }
	}
	if !isTerm() {
		return nil, false
	}
	in := bufio.NewReader(o.Factory.IO.In)
	fmt.Fprintln(w)
	for _, h := range hosts {
		yes, err := cmdutil.Confirm(in, w, fmt.Sprintf("allow %s? [y/N] ", h))
		if yes {
			accepted = append(accepted, h)
		}
		if err != nil {
			fmt.Fprintln(w)
			break // the input ended: no to the rest
		}
	}
	return accepted, true
}

// allowLearned adds the accepted hosts as asb network allow does, and says
// that the VM must be created again for them.
func allowLearned(o *LearnOptions, f *outer.Folder, hosts []string) error {
	e, warns, err := f.Allow(hosts)
	if err != nil {
		return cmdutil.InputError(err)
	}
	cmdutil.PrintWarnings(o.Factory.IO.ErrOut, warns)
	w := o.Factory.IO.Out
	fmt.Fprintln(w)
	printEdit(w, e, true)
	if e.Changed {
		fmt.Fprintln(w, "\nThe VM still runs with the allow list it was created with. Create it again for the change: "+
			"asb task vm:create (the next asb task agent does that too, since sandbox.yaml changed).")
	}
	return nil
}
