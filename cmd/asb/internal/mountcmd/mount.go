// Package mountcmd is `asb mount`: the host folders the VM sees.
package mountcmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/agents-sandbox/asb/cmd/asb/internal/boundarycmd"
	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/internal/yamledit"
	"github.com/agents-sandbox/asb/schema"
)

// Options are the parsed command line of `asb mount`.
type Options struct {
	Factory  *cmdutil.Factory
	Dir      string
	HostPath string
	Guest    string
	ReadOnly bool
}

// NewCmd returns `asb mount` and its subcommands.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "mount <command>",
		Short: "Add, list or remove the host folders the VM sees",
		Long: `Change mounts in sandbox.yaml: the host folders the VM sees, read-write or
read-only. Nothing else of the host is visible to the VM. Comments and
layout of sandbox.yaml are kept; the edit is checked like asb validate
before it is written, and nothing is written if it fails.`,
		Example: `  asb mount add ~/datasets /data --ro
  asb mount ls
  asb mount rm /data`,
		Args: cobra.NoArgs,
		RunE: boundarycmd.NeedSubcommand,
	}
	boundarycmd.AddDirFlag(cmd, &opts.Dir)
	add := &cobra.Command{
		Use:   "add HOST_PATH GUEST_PATH [--ro]",
		Short: "Show the host folder HOST_PATH in the VM at GUEST_PATH",
		Long: `Show the host folder HOST_PATH in the VM at GUEST_PATH, read-write unless
--ro is given. HOST_PATH is relative to the current folder; inside the
outer folder it is written as ./PATH (so the folder still works when it is
cloned elsewhere), outside it as an absolute path.

Refused, as by asb validate: a HOST_PATH that does not exist; /, your home
folder, the outer folder or a folder above it; a folder that holds a
secrets.env or secrets.yaml; a GUEST_PATH that is not absolute, is already
mounted, or is or holds /workspace, /home/dev or the agent's config folder
(e.g. /home/dev/.config/opencode).`,
		Example: `  # A read-only dataset
  asb mount add ~/datasets /data --ro

  # A second project, read-write
  asb mount add ../lib /lib`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.HostPath, opts.Guest = args[0], args[1]
			return runAdd(opts)
		},
	}
	add.Flags().BoolVar(&opts.ReadOnly, "ro", false, "mount read-only: the VM cannot change the folder")
	cmd.AddCommand(add)
	cmd.AddCommand(boundarycmd.ShowCommand(opts.Factory, &opts.Dir, "ls", []string{"list"},
		"List what the VM sees of the host", (*boundarycmd.Boundary).PrintMounts))
	cmd.AddCommand(&cobra.Command{
		Use:     "rm GUEST_PATH",
		Aliases: []string{"remove"},
		Short:   "Stop showing the folder mounted at GUEST_PATH",
		Long: `Remove the mount at GUEST_PATH from sandbox.yaml. The host folder itself is
not touched. Removing /workspace is refused by asb validate's rules: the
agent works there.`,
		Example: `  asb mount rm /data`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Guest = args[0]
			return runRm(opts)
		},
	})
	return cmd
}

// guestOf returns the guest path of a mounts entry.
func guestOf(n *yaml.Node) string {
	switch n.Kind {
	case yaml.ScalarNode:
		if _, g, _, err := schema.ParseShortMount(n.Value); err == nil {
			return path.Clean(g)
		}
	case yaml.MappingNode:
		if t := yamledit.Get(n, "target"); t != nil {
			return path.Clean(t.Value)
		}
	}
	return ""
}

func runAdd(o *Options) error {
	guest := o.Guest
	if !path.IsAbs(guest) {
		return &cmdutil.UsageError{Err: fmt.Errorf("GUEST_PATH %q must be an absolute path in the VM, e.g. /data", guest)}
	}
	if strings.ContainsAny(guest, ":\n") {
		return &cmdutil.UsageError{Err: fmt.Errorf("GUEST_PATH %q must not contain ':' or a newline", guest)}
	}
	guest = path.Clean(guest)
	s, err := boundarycmd.Open(o.Factory, o.Dir)
	if err != nil {
		return err
	}
	reserved := append([]string{schema.WorkspaceMount, boundarycmd.HomeTarget}, s.AgentTargets()...)
	for _, r := range reserved {
		if boundarycmd.IsUnder(r, guest) {
			return fmt.Errorf("GUEST_PATH %s would cover %s, which asb mounts itself; choose another path, e.g. /data", guest, r)
		}
		if r != boundarycmd.HomeTarget && boundarycmd.IsUnder(guest, r) {
			return fmt.Errorf("GUEST_PATH %s is inside %s, which asb mounts itself; choose another path, e.g. /data", guest, r)
		}
	}
	host, rel, err := o.hostPath(s)
	if err != nil {
		return err
	}
	doc, root, err := s.Doc(boundarycmd.SandboxFile)
	if err != nil {
		return err
	}
	mounts := yamledit.Get(root, "mounts")
	if mounts == nil || mounts.Kind != yaml.SequenceNode {
		if mounts != nil {
			return errors.New("sandbox.yaml: mounts is not a list; fix it by hand (asb validate explains)")
		}
		mounts = yamledit.Seq()
		yamledit.SpaceBefore(yamledit.Set(root, "mounts", mounts, schema.SandboxKeys))
	}
	for _, it := range yamledit.Items(mounts) {
		if g := guestOf(it); g == guest {
			return fmt.Errorf("%s is mounted already; remove it first: asb mount rm %s", guest, guest)
		}
	}
	m := yamledit.Map()
	yamledit.Set(m, "bind", yamledit.Quoted(rel), nil)
	yamledit.Set(m, "target", yamledit.Quoted(guest), nil)
	if o.ReadOnly {
		yamledit.Set(m, "readonly", yamledit.Bool(true), nil)
	}
	yamledit.Append(mounts, m)
	if err := s.Save(boundarycmd.SandboxFile, doc); err != nil {
		return err
	}
	if err := s.Commit(); err != nil {
		return err
	}
	w := o.Factory.IO.Out
	access := "read-write"
	if o.ReadOnly {
		access = "read-only"
	}
	fmt.Fprintf(w, "added to mounts: %s → %s (%s)\n", rel, guest, access)
	if filepath.IsAbs(rel) {
		fmt.Fprintf(w, "note: %s is outside the outer folder, so it is written as an absolute path; a teammate's clone needs the same folder\n", host)
	}
	fmt.Fprintln(w, "a running VM keeps its old mounts until it is created again (asb task vm:create)")
	fmt.Fprintln(w)
	s.Summarize().PrintMounts(w)
	return nil
}

// hostPath resolves HOST_PATH against the working directory and returns it
// absolute and as sandbox.yaml should write it.
func (o *Options) hostPath(s *boundarycmd.Session) (abs, rel string, err error) {
	p := o.HostPath
	if strings.ContainsAny(p, ":\n") {
		return "", "", &cmdutil.UsageError{Err: fmt.Errorf("HOST_PATH %q must not contain ':' or a newline", p)}
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		home := s.Getenv("HOME")
		if home == "" {
			return "", "", fmt.Errorf("HOST_PATH %q starts with ~ but $HOME is not set", p)
		}
		p = filepath.Join(home, strings.TrimPrefix(p, "~"))
	}
	if !filepath.IsAbs(p) {
		wd, err := o.Factory.Getwd()
		if err != nil {
			return "", "", fmt.Errorf("working directory: %w", err)
		}
		p = filepath.Join(wd, p)
	}
	p = filepath.Clean(p)
	fi, err := os.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", "", fmt.Errorf("HOST_PATH %s does not exist; create the folder first (msb would fail to start the VM)", p)
	case err != nil:
		return "", "", err
	case !fi.IsDir() && !fi.Mode().IsRegular():
		return "", "", fmt.Errorf("HOST_PATH %s is neither a folder nor a file", p)
	}
	dir := s.Dir
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	real := p
	if r, err := filepath.EvalSymlinks(p); err == nil {
		real = r
	}
	if r, err := filepath.Rel(dir, real); err == nil && r != "." && !strings.HasPrefix(r, "..") {
		return real, "./" + filepath.ToSlash(r), nil
	}
	return real, real, nil
}

func runRm(o *Options) error {
	if !path.IsAbs(o.Guest) {
		return &cmdutil.UsageError{Err: fmt.Errorf("GUEST_PATH %q must be the absolute path in the VM (asb mount ls lists them)", o.Guest)}
	}
	guest := path.Clean(o.Guest)
	s, err := boundarycmd.Open(o.Factory, o.Dir)
	if err != nil {
		return err
	}
	doc, root, err := s.Doc(boundarycmd.SandboxFile)
	if err != nil {
		return err
	}
	mounts := yamledit.Get(root, "mounts")
	n := yamledit.Remove(mounts, func(it *yaml.Node) bool { return guestOf(it) == guest })
	if n == 0 {
		return fmt.Errorf("nothing is mounted at %s; asb mount ls lists the mounts", guest)
	}
	if err := s.Save(boundarycmd.SandboxFile, doc); err != nil {
		return err
	}
	if err := s.Commit(); err != nil {
		return err
	}
	w := o.Factory.IO.Out
	fmt.Fprintf(w, "removed from mounts: %s (the host folder is untouched)\n\n", guest)
	s.Summarize().PrintMounts(w)
	return nil
}
