package networkcmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/internal/yamledit"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/schema"
)

// CheckOptions are the parsed command line of `asb network check`.
type CheckOptions struct {
	Factory *cmdutil.Factory
	Dir     string
	Target  string // HOST, HOST:PORT, an IP address or a URL
	Port    int    // --port; 0: the target's, else 443
}

func newCheckCmd(f *cmdutil.Factory, dir *string) *cobra.Command {
	opts := &CheckOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "check HOST|URL",
		Short: "Say whether the VM may reach a host, and which rule decides",
		Long: `Say whether the VM may open a connection to HOST (a domain name, an IP
address, HOST:PORT or a URL, which is reduced to its host and port: https
means 443), judged on sandbox.yaml's network as msb 0.7.2 resolves it, with
no VM: the deny entries first, then the allow entries, then the policy's
default. A name entry (example.com) matches that name only; *.example.com
matches example.com itself and every name below it.

Prints "Allowed: …" or "Denied: …" with the entry or default that decided,
and exits 1 when the host is denied (2 for a host that is not one). The
port is 443 unless the URL, HOST:PORT or --port names another.`,
		Example: `  asb network check api.github.com
  asb network check https://registry.npmjs.org/react
  asb network check example.com --port 80`,
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir, opts.Target = *dir, args[0]
			return runCheck(opts)
		},
	}
	cmd.Flags().IntVar(&opts.Port, "port", 0, "the TCP port to check (default: the URL's, else 443)")
	return cmd
}

func runCheck(o *CheckOptions) error {
	host, port, re := schema.Destination(o.Target, o.Port)
	if re != nil {
		return &cmdutil.UsageError{Err: schema.RuleField("network check", re)}
	}
	if port == 0 {
		port = schema.DefaultCheckPort
	}
	f, err := cmdutil.OpenFolder(o.Factory, o.Dir)
	if err != nil {
		return err
	}
	p, warns, err := currentEgress(f)
	if err != nil {
		return err
	}
	cmdutil.PrintWarnings(o.Factory.IO.ErrOut, warns)
	p = withHostnames(context.Background(), o.Factory, f, p) // strict mode by msb version (strict.go)
	d := p.Decide(host, port)
	if d.Allowed {
		fmt.Fprintf(o.Factory.IO.Out, "Allowed: %s\n", d.Why)
		return nil
	}
	fmt.Fprintf(o.Factory.IO.Out, "Denied: %s\n", d.Why)
	return &cmdutil.SilentError{Code: 1}
}

// currentEgress is sandbox.yaml's network as msb resolves it, every entry
// as written (msb's reading, not asb's), with asb's own objections to the
// network entries as warnings. An entry msb refuses is an error: msb
// create would fail, so there is no policy to judge.
func currentEgress(f *outer.Folder) (schema.EgressPolicy, []schema.Problem, error) {
	data, _ := f.Current(outer.SandboxFile)
	_, root, probs := schema.LoadSandbox(outer.SandboxFile, data)
	if root == nil {
		return schema.EgressPolicy{}, nil, fmt.Errorf("sandbox.yaml cannot be read as msb reads it: %s", firstProblem(probs))
	}
	nw, err := schema.RawNetwork(yamledit.Get(root, "network"))
	if err != nil {
		return schema.EgressPolicy{}, nil, &cmdutil.UsageError{Err: fmt.Errorf("sandbox.yaml: %w; fix it (asb validate shows where)", err)}
	}
	p := schema.Egress(nw)
	if len(p.Invalid) > 0 {
		bad := p.Invalid[0]
		return p, nil, &cmdutil.UsageError{Err: fmt.Errorf("sandbox.yaml: %s %q %s: msb create would refuse this file; fix the entry (asb validate shows where)",
			bad.Field, bad.Entry, bad.Why)}
	}
	var warns []schema.Problem
	for _, pr := range probs {
		if pr.Severity == schema.SeverityError && strings.HasPrefix(pr.Field, "network") {
			pr.Severity = schema.SeverityWarning
			warns = append(warns, pr)
		}
	}
	return p, warns, nil
}

func firstProblem(probs []schema.Problem) string {
	if len(probs) == 0 {
		return "it is not a YAML mapping"
	}
	return probs[0].String()
}
