// Package portcmd is `asb port`: host ports forwarded into the VM.
package portcmd

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/agents-sandbox/asb/cmd/asb/internal/boundarycmd"
	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/internal/yamledit"
	"github.com/agents-sandbox/asb/schema"
)

// Options are the parsed command line of `asb port`.
type Options struct {
	Factory *cmdutil.Factory
	Dir     string
	Spec    string
}

// NewCmd returns `asb port` and its subcommands.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "port <command>",
		Short: "Forward host ports into the VM",
		Long: `Change ports in sandbox.yaml: the host ports forwarded to ports of the VM,
e.g. to open the agent's dev server in your browser. msb binds them to
127.0.0.1 unless the entry names another address (BIND:HOST:GUEST).
Comments and layout of sandbox.yaml are kept; the edit is checked like
asb validate before it is written.`,
		Example: `  asb port add 5173:5173
  asb port ls
  asb port rm 5173`,
		Args: cobra.NoArgs,
		RunE: boundarycmd.NeedSubcommand,
	}
	boundarycmd.AddDirFlag(cmd, &opts.Dir)
	cmd.AddCommand(&cobra.Command{
		Use:   "add [BIND:]HOST:GUEST[/tcp|/udp]",
		Short: "Forward host port HOST to guest port GUEST",
		Long: `Forward host port HOST to port GUEST of the VM (tcp unless /udp is given),
bound to 127.0.0.1 unless BIND names another IPv4 address. A host port
that is forwarded already is refused: remove it first with asb port rm.`,
		Example: `  asb port add 5173:5173
  asb port add 8080:80
  asb port add 9000:9000/udp`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Spec = args[0]
			return runAdd(opts)
		},
	})
	cmd.AddCommand(boundarycmd.ShowCommand(opts.Factory, &opts.Dir, "ls", []string{"list"},
		"List the forwarded ports", (*boundarycmd.Boundary).PrintPorts))
	cmd.AddCommand(&cobra.Command{
		Use:     "rm HOST:GUEST|HOST",
		Aliases: []string{"remove"},
		Short:   "Stop forwarding a port",
		Long: `Stop forwarding a port: give the entry (HOST:GUEST, as asb port ls shows
it) or only the host port, which removes every entry for it.`,
		Example: `  asb port rm 5173:5173
  asb port rm 5173`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Spec = args[0]
			return runRm(opts)
		},
	})
	return cmd
}

// portLists returns the sequences of sandbox.yaml that hold ports: the
// top-level ports and network.ports.
func portLists(root *yaml.Node) []*yaml.Node {
	var out []*yaml.Node
	if p := yamledit.Get(root, "ports"); p != nil && p.Kind == yaml.SequenceNode {
		out = append(out, p)
	}
	if nw := yamledit.Get(root, "network"); nw != nil {
		if p := yamledit.Get(nw, "ports"); p != nil && p.Kind == yaml.SequenceNode {
			out = append(out, p)
		}
	}
	return out
}

func sameHostPort(a, b schema.PortSpec) bool {
	bind := func(s string) string {
		if s == "" {
			return "127.0.0.1"
		}
		return s
	}
	return a.Host == b.Host && a.Protocol == b.Protocol && (bind(a.Bind) == bind(b.Bind) || a.Bind == "0.0.0.0" || b.Bind == "0.0.0.0")
}

func runAdd(o *Options) error {
	p, err := schema.ParsePort(o.Spec)
	if err != nil {
		return &cmdutil.UsageError{Err: err}
	}
	s, err := boundarycmd.Open(o.Factory, o.Dir)
	if err != nil {
		return err
	}
	doc, root, err := s.Doc(boundarycmd.SandboxFile)
	if err != nil {
		return err
	}
	for _, seq := range portLists(root) {
		for _, it := range yamledit.Items(seq) {
			q, err := schema.ParsePort(it.Value)
			if err == nil && sameHostPort(p, q) {
				return fmt.Errorf("host port %d/%s is forwarded already (%s); remove it first: asb port rm %s", p.Host, p.Protocol, it.Value, it.Value)
			}
		}
	}
	seq := yamledit.Get(root, "ports")
	if seq == nil || seq.Kind != yaml.SequenceNode {
		seq = yamledit.Seq()
		k := yamledit.Set(root, "ports", seq, schema.SandboxKeys)
		k.HeadComment = "# Host ports forwarded to the VM (bound to 127.0.0.1)."
		yamledit.SpaceBefore(k)
	}
	item := yamledit.Quoted(p.String())
	if len(seq.Content) > 0 {
		item = yamledit.String(p.String())
	}
	yamledit.Append(seq, item)
	if err := s.Save(boundarycmd.SandboxFile, doc); err != nil {
		return err
	}
	if err := s.Commit(); err != nil {
		return err
	}
	w := o.Factory.IO.Out
	fmt.Fprintf(w, "added to ports: %s\n", p.String())
	if p.Bind != "" && p.Bind != "127.0.0.1" {
		fmt.Fprintf(w, "note: bound to %s, so other machines may reach port %d too\n", p.Bind, p.Host)
	}
	fmt.Fprintln(w, "a running VM keeps its old ports until it is created again (asb task vm:create)")
	fmt.Fprintln(w)
	s.Summarize().PrintPorts(w)
	return nil
}

func runRm(o *Options) error {
	var match func(schema.PortSpec) bool
	if n, err := strconv.Atoi(o.Spec); err == nil && strconv.Itoa(n) == o.Spec {
		if n < 1 || n > 65535 {
			return &cmdutil.UsageError{Err: fmt.Errorf("port %q must be a number from 1 to 65535", o.Spec)}
		}
		match = func(q schema.PortSpec) bool { return q.Host == n }
	} else {
		p, err := schema.ParsePort(o.Spec)
		if err != nil {
			return &cmdutil.UsageError{Err: fmt.Errorf("%w; or give only the host port, e.g. asb port rm 8080", err)}
		}
		match = func(q schema.PortSpec) bool { return q.String() == p.String() }
	}
	s, err := boundarycmd.Open(o.Factory, o.Dir)
	if err != nil {
		return err
	}
	doc, root, err := s.Doc(boundarycmd.SandboxFile)
	if err != nil {
		return err
	}
	var removed []string
	for _, seq := range portLists(root) {
		yamledit.Remove(seq, func(it *yaml.Node) bool {
			q, err := schema.ParsePort(it.Value)
			if err == nil && match(q) {
				removed = append(removed, it.Value)
				return true
			}
			return false
		})
	}
	if len(removed) == 0 {
		return fmt.Errorf("no forwarded port matches %q; asb port ls lists them", o.Spec)
	}
	if p := yamledit.Get(root, "ports"); p != nil && p.Kind == yaml.SequenceNode && len(p.Content) == 0 {
		yamledit.Delete(root, "ports")
	}
	if nw := yamledit.Get(root, "network"); nw != nil {
		if p := yamledit.Get(nw, "ports"); p != nil && p.Kind == yaml.SequenceNode && len(p.Content) == 0 {
			yamledit.Delete(nw, "ports")
		}
	}
	if err := s.Save(boundarycmd.SandboxFile, doc); err != nil {
		return err
	}
	if err := s.Commit(); err != nil {
		return err
	}
	w := o.Factory.IO.Out
	fmt.Fprintf(w, "removed from ports: %s\n\n", strings.Join(removed, ", "))
	s.Summarize().PrintPorts(w)
	return nil
}
