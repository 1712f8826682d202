// Package networkcmd is `asb network`: which hosts the VM may reach.
package networkcmd

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/outer"
)

// Options are the parsed command line of `asb network`.
type Options struct {
	Factory *cmdutil.Factory
	Dir     string
	Hosts   []string
}

// NewCmd returns `asb network` and its subcommands.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "network <command>",
		Short: "Allow, deny, check and learn the hosts the VM may reach",
		Long: `Change network in sandbox.yaml: which hosts the agent in the VM may reach.
Comments and layout of sandbox.yaml are kept; the edit is checked like
asb validate before it is written, and nothing is written if it fails.

With the allow-list form (network: {allow: [...]}, what asb init writes),
egress is denied except to the listed hosts. With network: public or open
(or no network key, msb's default) the VM reaches the whole internet and
only a deny list narrows it; with network: none it reaches nothing.

check says whether the VM may reach a host, as msb decides it; log lists
what msb let through and refused; learn proposes the refused hosts for the
allow list (docs/network.md).`,
		Example: `  asb network allow registry.npmjs.org
  asb network deny api.example.com
  asb network show
  asb network check https://registry.npmjs.org/
  asb network log --since 1h
  asb network learn`,
		Args: cmdutil.NoArgs,
		RunE: cmdutil.NeedSubcommand,
	}
	cmdutil.AddDirFlag(cmd, &opts.Dir)
	cmd.AddCommand(newAllowCmd(opts), newDenyCmd(opts),
		newCheckCmd(f, &opts.Dir), newLogCmd(f, &opts.Dir), newLearnCmd(f, &opts.Dir),
		cmdutil.ShowCommand(opts.Factory, &opts.Dir, "show", []string{"ls"},
			"Show the egress policy and the allowed and denied hosts", (*outer.Boundary).PrintNetwork))
	return cmd
}

func newAllowCmd(opts *Options) *cobra.Command {
	return &cobra.Command{
		Use:   "allow HOST...",
		Short: "Let the VM reach HOST",
		Long: `Let the VM reach each HOST (a domain such as api.github.com, or *.example.com
for example.com itself and every name below it: msb's suffix rule). In the
allow-list form HOST is added to network.allow
unless an entry already covers it; under any policy HOST is also taken out
of network.deny. Under public, open or no network key HOST is reachable
already and the policy is left alone; under none, nothing is changed and asb
says how to switch to an allow list.`,
		Example: `  asb network allow registry.npmjs.org
  asb network allow api.github.com,github.com "*.githubusercontent.com"`,
		Args: cmdutil.MinimumArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Hosts = outer.SplitHosts(args)
			return runEdit(cmd.Context(), opts, true)
		},
	}
}

func newDenyCmd(opts *Options) *cobra.Command {
	return &cobra.Command{
		Use:   "deny HOST...",
		Short: "Keep the VM from reaching HOST",
		Long: `Keep the VM from reaching each HOST.

In the allow-list form HOST is removed from network.allow; when another
entry (such as *.example.com) still covers it, HOST is also added to
network.deny, which msb checks before the allow rules. A host that is
neither listed nor covered is denied already, and nothing changes.
Removing the last allowed host is refused: msb 0.7.2 reads an empty allow
list as the whole public internet (write network: none to block all).

Under public or open (or no network key), HOST is added to network.deny;
a string policy becomes the object form {policy: public, deny: [HOST]}.
Under none every host is denied already.

A secret bound to HOST stays in secrets.yaml; asb validate then warns that
it can never be used.`,
		Example: `  asb network deny api.example.com`,
		Args:    cmdutil.MinimumArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Hosts = outer.SplitHosts(args)
			return runEdit(cmd.Context(), opts, false)
		},
	}
}

func runEdit(ctx context.Context, o *Options, allow bool) error {
	f, release, err := cmdutil.EditFolder(ctx, o.Factory, o.Dir, "asb network allow/deny")
	if err != nil {
		return err
	}
	defer release()
	edit := f.Deny
	if allow {
		edit = f.Allow
	}
	e, warns, err := edit(o.Hosts)
	if err != nil {
		return cmdutil.InputError(err)
	}
	cmdutil.PrintWarnings(o.Factory.IO.ErrOut, warns)
	printEdit(o.Factory.IO.Out, e, allow)
	fmt.Fprintln(o.Factory.IO.Out)
	f.Summarize().PrintNetwork(o.Factory.IO.Out)
	return nil
}

// printEdit says what an allow (or deny) edit did, host by host.
func printEdit(w io.Writer, e outer.NetEdit, allow bool) {
	list := func(verb string, hosts []string) {
		if len(hosts) > 0 {
			fmt.Fprintf(w, "%s %s\n", verb, strings.Join(hosts, ", "))
		}
	}
	if allow {
		list("added to network.allow:", e.Added)
		list("removed from network.deny:", e.Removed)
	} else {
		list("removed from network.allow:", e.Removed)
		list("added to network.deny:", e.Added)
	}
	for _, h := range e.Already {
		why := "already denied"
		if allow {
			why = "already reachable"
		}
		if c := e.Coverage[h]; c != "" && c != h {
			why += " (covered by " + c + ")"
		}
		fmt.Fprintf(w, "%s: %s\n", h, why)
	}
	for _, h := range e.Added {
		if c := e.Coverage[h]; !allow && c != "" {
			fmt.Fprintf(w, "%s is still covered by %s in network.allow; the deny entry wins\n", h, c)
		}
	}
	if e.Note != "" {
		fmt.Fprintln(w, e.Note)
	}
	if !e.Changed {
		fmt.Fprintln(w, "sandbox.yaml was not changed")
	}
}
