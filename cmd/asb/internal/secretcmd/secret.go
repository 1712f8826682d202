// Package secretcmd is `asb secret`: credentials the agent may use without
// seeing them.
package secretcmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/runner"
)

// Options are the parsed command line of `asb secret`.
type Options struct {
	Factory *cmdutil.Factory
	Dir     string

	Name        string
	Allow       []string
	Query, Body bool
	Force       bool
	From        string // the command that prints the value (host-only)
	setQuery    bool
	setBody     bool
}

// NewCmd returns `asb secret` and its subcommands.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "secret <command>",
		Short: "Bind credentials the agent may use without ever seeing them",
		Long: `Change secrets.yaml: the credentials the agent may use. The VM only gets a
placeholder ($MSB_<NAME>) in the variable NAME; the microsandbox proxy swaps
in the real value on requests to the secret's hosts, and nowhere else.

The real value never goes through asb: put it in secrets.env (host only,
mode 0600, git-ignored) or export it in your shell. asb writes only the
binding, value: "${NAME}", to secrets.yaml, and a commented "# NAME=" line
to secrets.env for you to fill in.`,
		Example: `  asb secret add GITHUB_TOKEN --allow api.github.com,github.com
  $EDITOR secrets.env      # GITHUB_TOKEN=...
  asb secret ls
  asb secret rm GITHUB_TOKEN`,
		Args: cmdutil.NoArgs,
		RunE: cmdutil.NeedSubcommand,
	}
	cmdutil.AddDirFlag(cmd, &opts.Dir)
	cmd.AddCommand(newAddCmd(opts), newLsCmd(opts), newRmCmd(opts), newStampCmd(opts), newExecCmd(opts))
	return cmd
}

func newAddCmd(opts *Options) *cobra.Command {
	add := &cobra.Command{
		Use:   "add NAME --allow HOST[,HOST…] [--query] [--body]",
		Short: "Bind the credential NAME to the hosts that may receive it",
		Long: `Bind the credential NAME (an environment variable name) to the hosts that
may receive it:

  secrets.yaml   NAME: {value: "${NAME}", allow: [HOST…],
                        substitution: {headers: true, query: …, body: …}}
  sandbox.yaml   each HOST is added to network.allow (allow-list form only;
                 under public or open it is reachable already, under none
                 it is not, and the policy is left alone either way)
  secrets.env    a commented "# NAME=" line, if NAME has none (the file is
                 created with mode 0600 when missing); never a value

With --from 'COMMAND' (e.g. 'gh auth token', or 'op read op://…') the value
comes from the command instead: it is kept on this host only (your state
folder, never the outer folder, so a clone cannot carry one), run with sh
when the VM is created or started, and its output is handed to msb in its
environment, never written, printed or put in an argument. A command that
fails stops the task with its standard error; its output is never shown.

The value is substituted in request headers; --query and --body also allow
the URL's query and the request body. A NAME that is bound already is
refused; --force replaces its hosts (and, when given, --query and --body).`,
		Example: `  asb secret add GITHUB_TOKEN --allow api.github.com,github.com
  asb secret add NPM_TOKEN --allow registry.npmjs.org
  asb secret add MAPS_KEY --allow maps.example.com --query
  asb secret add GITHUB_TOKEN --allow api.github.com --from 'gh auth token'`,
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			opts.setQuery = cmd.Flags().Changed("query")
			opts.setBody = cmd.Flags().Changed("body")
			return runAdd(cmd.Context(), opts)
		},
	}
	add.Flags().StringSliceVar(&opts.Allow, "allow", nil, "hosts that may receive the value, e.g. api.github.com,github.com (required)")
	add.Flags().BoolVar(&opts.Query, "query", false, "also substitute the value in the URL's query string")
	add.Flags().BoolVar(&opts.Body, "body", false, "also substitute the value in request bodies")
	add.Flags().BoolVar(&opts.Force, "force", false, "replace the hosts of a secret that is bound already")
	add.Flags().StringVar(&opts.From, "from", "", "a command that prints the value (e.g. 'gh auth token'), run on this host when the VM is created or started; recorded on this host only, never in the folder")
	return add
}

func newLsCmd(opts *Options) *cobra.Command {
	return &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List the secrets: name, hosts, substitution, set or not (never the value)",
		Long: `List the secrets of secrets.yaml: the name, the hosts that may receive it,
where in a request it is substituted, and whether the host has a value for
it ("set": exported in your shell or given in secrets.env; "not set").
Values are never shown.`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLs(opts)
		},
	}
}

func newRmCmd(opts *Options) *cobra.Command {
	return &cobra.Command{
		Use:     "rm NAME",
		Aliases: []string{"remove"},
		Short:   "Remove the binding of NAME from secrets.yaml",
		Long: `Remove the binding of NAME from secrets.yaml. The VM no longer gets the
variable. Two things are left as they are, and asb says so: the hosts in
network.allow (something else may need them: asb network deny HOST removes
one), and NAME's line in secrets.env, which is yours and may hold the value.`,
		Example: `  asb secret rm GITHUB_TOKEN`,
		Args:    cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			return runRm(cmd.Context(), opts)
		},
	}
}

func runAdd(ctx context.Context, o *Options) error {
	if o.From != "" {
		if err := checkFrom(o.From); err != nil {
			return &cmdutil.UsageError{Err: err}
		}
	}
	hosts := outer.SplitHosts(o.Allow)
	if len(hosts) == 0 {
		return &cmdutil.UsageError{Err: fmt.Errorf("--allow is required: a secret with no host could never be sent anywhere; e.g. asb secret add %s --allow api.example.com", o.Name)}
	}
	f, release, err := cmdutil.EditFolder(ctx, o.Factory, o.Dir, "asb secret add")
	if err != nil {
		return err
	}
	defer release()
	req := outer.SecretRequest{Name: o.Name, Hosts: hosts, Force: o.Force, FromCommand: o.From != ""}
	if o.setQuery {
		req.Query = &o.Query
	}
	if o.setBody {
		req.Body = &o.Body
	}
	e, err := f.AddSecret(req)
	if err != nil {
		return cmdutil.InputError(err)
	}
	cmdutil.PrintWarnings(o.Factory.IO.ErrOut, e.Warnings)
	w := o.Factory.IO.Out
	if e.Replaced {
		fmt.Fprintf(w, "secrets.yaml: %s now goes to %s\n", o.Name, strings.Join(hosts, ", "))
	} else {
		fmt.Fprintf(w, "secrets.yaml: added %s, sent only to %s\n", o.Name, strings.Join(hosts, ", "))
	}
	switch net := e.Net; {
	case len(net.Added) > 0:
		fmt.Fprintf(w, "sandbox.yaml: added to network.allow: %s\n", strings.Join(net.Added, ", "))
	case net.Refusal != "":
		fmt.Fprintf(w, "sandbox.yaml: not changed: %s; so %s cannot be used until its hosts are reachable\n", net.Refusal, o.Name)
	case net.Note != "":
		fmt.Fprintf(w, "sandbox.yaml: %s\n", net.Note)
	}
	if len(e.Net.Removed) > 0 {
		fmt.Fprintf(w, "sandbox.yaml: removed from network.deny: %s\n", strings.Join(e.Net.Removed, ", "))
	}
	if o.From != "" {
		if err := recordFrom(o, f.Dir); err != nil {
			return err
		}
	} else if e.EnvLine {
		fmt.Fprintf(w, "secrets.env: added a line \"# %s=\"; uncomment it and fill in the value (or export %s)\n", o.Name, o.Name)
	}
	fmt.Fprintln(w)
	b := f.Summarize()
	b.PrintSecrets(w)
	fmt.Fprintln(w)
	b.PrintNetwork(w)
	return nil
}

func runLs(o *Options) error {
	f, err := cmdutil.OpenFolder(o.Factory, o.Dir)
	if err != nil {
		return err
	}
	b := f.Summarize()
	w := o.Factory.IO.Out
	if len(b.Secrets) == 0 {
		fmt.Fprintln(w, "no secrets: asb secret add NAME --allow HOST binds one")
		return nil
	}
	width := len("NAME")
	hw := len("HOSTS")
	for _, sec := range b.Secrets {
		width = max(width, len(sec.Name))
		hw = max(hw, len(strings.Join(sec.Hosts, ",")))
	}
	fmt.Fprintf(w, "%-*s  %-*s  %-20s  %s\n", width, "NAME", hw, "HOSTS", "SUBSTITUTION", "VALUE")
	for _, sec := range b.Secrets {
		state := "not set"
		if sec.Set {
			state = "set (" + sec.From + ")"
		}
		if sec.CommandMissing != "" {
			state = "command cannot run: " + sec.CommandMissing
		}
		fmt.Fprintf(w, "%-*s  %-*s  %-20s  %s\n", width, sec.Name, hw, strings.Join(sec.Hosts, ","), sec.Where(), state)
	}
	for _, p := range b.Problems {
		fmt.Fprintln(o.Factory.IO.ErrOut, p)
	}
	return nil
}

func runRm(ctx context.Context, o *Options) error {
	f, release, err := cmdutil.EditFolder(ctx, o.Factory, o.Dir, "asb secret rm")
	if err != nil {
		return err
	}
	defer release()
	r, err := f.RemoveSecret(o.Name)
	if err != nil {
		return err
	}
	if err := forgetFrom(o, f.Dir); err != nil {
		return err
	}
	cmdutil.PrintWarnings(o.Factory.IO.ErrOut, r.Warnings)
	w := o.Factory.IO.Out
	fmt.Fprintf(w, "secrets.yaml: removed %s; the VM no longer gets it\n", o.Name)
	if len(r.LeftHosts) > 0 {
		fmt.Fprintf(w, "left in network.allow: %s (something else may need them; asb network deny HOST removes one)\n", strings.Join(r.LeftHosts, ", "))
	}
	if r.EnvLine {
		fmt.Fprintf(w, "left in secrets.env: the %s line, which is yours (it may hold the value); delete it by hand\n", o.Name)
	}
	fmt.Fprintln(w)
	f.Summarize().PrintSecrets(w)
	return nil
}

// newStampCmd is `asb secret stamp VM`, which vm:create and vm:start run
// once the VM started: a fingerprint of the values it started with (keyed,
// revealing none), so that asb task agent restarts it when they change.
// Each VM (the folder's, a session's) has its own.
func newStampCmd(opts *Options) *cobra.Command {
	return &cobra.Command{
		Use:    "stamp [VM]",
		Short:  "Record a fingerprint of the secrets' values VM started with (the Taskfile runs this)",
		Hidden: true,
		Args:   cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := cmdutil.FolderDir(opts.Factory.Getwd, opts.Dir)
			if err != nil {
				return err
			}
			vm := ""
			if len(args) == 1 {
				vm = args[0]
			}
			return runner.StampSecrets(dir, vm, opts.Factory.Getenv)
		},
	}
}
