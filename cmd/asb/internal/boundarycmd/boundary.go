// Package boundarycmd is `asb boundary`: one screen of what the agent in the
// VM can reach (outer.Boundary).
package boundarycmd

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/internal/termtext"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/schema"
	"github.com/agents-sandbox/asb/serve"
)

// Options are the parsed command line of `asb boundary`.
type Options struct {
	Factory *cmdutil.Factory
	Dir     string
	Format  string
	Target  string // local (the VM) or kubernetes (asb export kubernetes)
	Session string // a session's VM (asb session new) instead of the folder's
}

// NewCmd returns `asb boundary`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "boundary [--format json]",
		Short: "Show what the agent in the VM can reach: files, network, ports, secrets",
		Long: `Show, on one screen, everything the agent inside the VM can reach, as
sandbox.yaml, secrets.yaml and the Taskfile set it up:

  files     each mount (read-write or read-only), the persistent home volume
            at /home/dev, and the agent's config folder, which is a read-only
            bind of this folder's copy (your host's own agent config is never
            copied into the VM)
  network   the egress policy and the allowed and denied hosts
  ports     the host ports forwarded into the VM
  secrets   each credential by name, with the hosts it is sent to and whether
            the host has a value; never the value
  served    the agent's server asb serve forwards a port of 127.0.0.1 to

Nothing is written and no VM is needed. Change the boundary with asb mount,
asb network, asb port and asb secret; check it with asb validate.`,
		Example: `  # In an outer folder (or any folder below it)
  asb boundary

  # The same as JSON, for scripts
  asb boundary --format json -d myproj

  # What differs in a pod of asb export kubernetes
  asb boundary --target kubernetes`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return Run(opts)
		},
	}
	cmdutil.AddDirFlag(cmd, &opts.Dir)
	cmd.Flags().StringVar(&opts.Target, "target", "local", "where the folder runs: local (the VM) or kubernetes (what differs in a pod of asb export kubernetes)")
	cmd.Flags().StringVar(&opts.Format, "format", "text", "output format: text or json")
	cmd.Flags().StringVar(&opts.Session, "session", "", "the boundary of session NAME's VM (its derived config: its checkout at /workspace, its own host ports)")
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// Run prints the boundary.
func Run(o *Options) error {
	if o.Format != "text" && o.Format != "json" {
		return &cmdutil.UsageError{Err: fmt.Errorf("--format %q: use text or json", o.Format)}
	}
	if o.Target != "local" && o.Target != "kubernetes" {
		return &cmdutil.UsageError{Err: fmt.Errorf("--target %q: use local or kubernetes", o.Target)}
	}
	f, err := cmdutil.OpenFolder(o.Factory, o.Dir)
	if err != nil {
		return err
	}
	if o.Session != "" {
		s, err := outer.FindSession(f.Dir, o.Session)
		if err != nil {
			return cmdutil.InputError(err)
		}
		if err := f.ForSession(s); err != nil {
			return err
		}
	}
	b := f.Summarize()
	if o.Target == "kubernetes" {
		if o.Format == "json" {
			return json.NewEncoder(termtext.JSON(o.Factory.IO.Out)).Encode(struct {
				Dir    string  `json:"dir"`
				Target string  `json:"target"`
				Points []Point `json:"points"`
			}{b.Dir, o.Target, kubernetesPoints(b)})
		}
		printKubernetes(o.Factory.IO.Out, b)
		return nil
	}
	appr := approval(o.Factory, f.Dir)
	sv, err := served(f.Dir)
	if err != nil {
		return err
	}
	if o.Format == "json" {
		enc := json.NewEncoder(termtext.JSON(o.Factory.IO.Out))
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			*outer.Boundary
			Served   *Served  `json:"served"`
			Approval Approval `json:"approval"`
		}{b, sv, appr})
	}
	b.Print(o.Factory.IO.Out)
	w := o.Factory.IO.Out
	printServed(w, sv)
	switch {
	case appr.Trusted:
		fmt.Fprintf(w, "\nApproval: asb task runs this folder: %s.\n", appr.Why)
	case len(appr.Refused) > 0:
		fmt.Fprintln(w, "\nApproval: refused by the policy in force (below): asb task runs nothing of it, whatever asb trust says.")
	default:
		fmt.Fprintf(w, "\nApproval: not approved: %s. asb task runs nothing of it (not its Taskfile, configs or image) until asb trust; asb trust --show shows what it grants and what changed.\n", appr.Why)
	}
	printPolicy(w, appr, o.Factory)
	return nil
}

// Approval is whether asb task runs the folder as it is (outer.Judge),
// and the policy files in force.
type Approval struct {
	Trusted bool     `json:"trusted"`
	Why     string   `json:"why"`
	Policy  []string `json:"policy"`
	// Refused are the policy's refusals of this folder.
	Refused []string `json:"refused,omitempty"`
}

// approval is the folder's verdict as asb task would find it: the cached
// one while nothing it was made from changed (outer.CheckTrustCached), so
// that a look neither reads and hashes the trust set nor writes the cache.
func approval(f *cmdutil.Factory, dir string) Approval {
	v, err := outer.CheckTrustCached(dir, cmdutil.Judge(f))
	if err != nil {
		return Approval{Why: err.Error(), Policy: []string{}}
	}
	pol, err := v.PolicyInForce()
	if err != nil {
		return Approval{Why: err.Error(), Policy: []string{}}
	}
	a := Approval{Trusted: v.Trusted, Why: v.Why, Policy: pol.Files()}
	if a.Policy == nil {
		a.Policy = []string{}
	}
	for _, p := range v.Refused {
		a.Refused = append(a.Refused, p.String())
	}
	return a
}

// Served is the agent's server asb serve forwards a host port to (nil when
// the folder does not serve).
type Served struct {
	URL       string `json:"url"`
	Port      int    `json:"port"`
	GuestPort int    `json:"guest_port"`
	Password  string `json:"password"` // where it is, never the value
	Notify    string `json:"notify"`
}

func served(dir string) (*Served, error) {
	r, ok, err := serve.Load(dir)
	if err != nil || !ok {
		return nil, err
	}
	mode := r.Notify
	if mode == "" {
		mode = serve.NotifyOff
	}
	return &Served{URL: r.URL(), Port: r.Port, GuestPort: r.GuestPort, Password: serve.PasswordVar + " in secrets.env", Notify: mode}, nil
}

func printServed(w io.Writer, sv *Served) {
	if sv == nil {
		fmt.Fprintln(w, "\nServed: no (asb serve runs the agent's server for clients on this host).")
		return
	}
	fmt.Fprintf(w, "\nServed: the agent's server at %s (host 127.0.0.1:%d → VM port %d; 127.0.0.1 only), password %s, notifications %s.\n",
		sv.URL, sv.Port, sv.GuestPort, sv.Password, sv.Notify)
}

// printPolicy names the policy files in force, and what of this folder
// they refuse.
func printPolicy(w io.Writer, a Approval, f *cmdutil.Factory) {
	if len(a.Policy) == 0 {
		var files []string // the machine's is none in a test binary
		for _, p := range []string{f.MachinePolicy, schema.UserPolicyPath(f.Getenv)} {
			if p != "" {
				files = append(files, p)
			}
		}
		fmt.Fprintf(w, "Policy: none in force (%s).\n", strings.Join(files, ", "))
		return
	}
	fmt.Fprintf(w, "Policy: %s.\n", strings.Join(a.Policy, ", "))
	for _, r := range a.Refused {
		fmt.Fprintf(w, "  refused: %s\n", r)
	}
}
