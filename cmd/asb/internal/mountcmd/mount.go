// Package mountcmd is `asb mount`: the host folders the VM sees.
package mountcmd

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/outer"
)

// Options are the parsed command line of `asb mount`.
type Options struct {
	Factory   *cmdutil.Factory
	Dir       string
	HostPath  string
	Guest     string
	ReadOnly  bool
	AllowHome bool
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
		Args: cmdutil.NoArgs,
		RunE: cmdutil.NeedSubcommand,
	}
	cmdutil.AddDirFlag(cmd, &opts.Dir)
	cmd.AddCommand(newAddCmd(opts),
		cmdutil.ShowCommand(opts.Factory, &opts.Dir, "ls", []string{"list"},
			"List what the VM sees of the host", (*outer.Boundary).PrintMounts),
		newRmCmd(opts))
	return cmd
}

func newAddCmd(opts *Options) *cobra.Command {
	add := &cobra.Command{
		Use:   "add HOST_PATH GUEST_PATH [--ro]",
		Short: "Show the host folder HOST_PATH in the VM at GUEST_PATH",
		Long: `Show the host folder HOST_PATH in the VM at GUEST_PATH, read-write unless
--ro is given. HOST_PATH is relative to the current folder; inside the
outer folder it is written as ./PATH (so the folder still works when it is
cloned elsewhere), outside it as an absolute path.

The mount policy (asb validate applies it too) refuses a mount that would
hand the host over to the VM:

  HOST_PATH   must be a folder that exists; not /, the outer folder or a
              folder above it (the VM would see secrets.env), not a folder
              holding a secrets.env or secrets.yaml; not a system folder of
              the host (/etc, /usr, /proc, /sys, /dev, /boot, /run, /root,
              /var/lib/docker, … or all of /var, /opt, /home); not a folder
              holding a container engine's socket (docker.sock, podman.sock:
              whoever reaches one is root on the host); not a folder under
              your $HOME (keys, tokens, history) unless --allow-home says
              you mean it; not a host folder mounted already.
  GUEST_PATH  must be absolute; not a folder the VM needs (/etc, /proc,
              /sys, /dev, /usr, /bin, /lib, /sbin, /boot, /run, nor all of
              /var, /tmp or /home/dev); not one asb mounts itself
              (/workspace, /home/dev, the agent's config folder), nor inside
              or above them (a folder inside /home/dev is fine); not one
              mounted already.

asb validate also warns when a read-only mount's folder lies inside a
writable one (the VM could change it there).`,
		Example: `  # A read-only dataset
  asb mount add ~/datasets /data --ro

  # A second project, read-write
  asb mount add ../lib /lib`,
		Args: cmdutil.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.HostPath, opts.Guest = args[0], args[1]
			return runAdd(cmd.Context(), opts)
		},
	}
	add.Flags().BoolVar(&opts.ReadOnly, "ro", false, "mount read-only: the VM cannot change the folder")
	add.Flags().BoolVar(&opts.AllowHome, "allow-home", false, "allow a folder under $HOME (written as a '# asb: allow-home' comment beside it)")
	return add
}

func newRmCmd(opts *Options) *cobra.Command {
	return &cobra.Command{
		Use:     "rm GUEST_PATH",
		Aliases: []string{"remove"},
		Short:   "Stop showing the folder mounted at GUEST_PATH",
		Long: `Remove the mount at GUEST_PATH from sandbox.yaml. The host folder itself is
not touched. Removing /workspace is refused by asb validate's rules: the
agent works there.`,
		Example: `  asb mount rm /data`,
		Args:    cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Guest = args[0]
			return runRm(cmd.Context(), opts)
		},
	}
}

func runAdd(ctx context.Context, o *Options) error {
	guest := o.Guest
	if strings.ContainsAny(guest, ":\n") {
		return &cmdutil.UsageError{Err: fmt.Errorf("GUEST_PATH %q must not contain ':' or a newline", guest)}
	}
	if strings.ContainsAny(o.HostPath, ":\n") {
		return &cmdutil.UsageError{Err: fmt.Errorf("HOST_PATH %q must not contain ':' or a newline", o.HostPath)}
	}
	wd, err := o.Factory.Getwd()
	if err != nil {
		return fmt.Errorf("working directory: %w", err)
	}
	f, release, err := cmdutil.EditFolder(ctx, o.Factory, o.Dir, "asb mount add")
	if err != nil {
		return err
	}
	defer release()
	e, err := f.AddMount(outer.MountRequest{HostPath: o.HostPath, WorkDir: wd, Guest: guest, ReadOnly: o.ReadOnly, AllowHome: o.AllowHome})
	if err != nil {
		return cmdutil.InputError(err)
	}
	cmdutil.PrintWarnings(o.Factory.IO.ErrOut, e.Warnings)
	w := o.Factory.IO.Out
	access := "read-write"
	if o.ReadOnly {
		access = "read-only"
	}
	fmt.Fprintf(w, "added to mounts: %s → %s (%s)\n", e.Source, e.Guest, access)
	if filepath.IsAbs(e.Source) {
		fmt.Fprintf(w, "note: %s is outside the outer folder, so it is written as an absolute path; a teammate's clone needs the same folder\n", e.Host)
	}
	fmt.Fprintln(w, "a running VM keeps its old mounts until it is created again (asb task vm:create)")
	fmt.Fprintln(w)
	f.Summarize().PrintMounts(w)
	return nil
}

func runRm(ctx context.Context, o *Options) error {
	if !path.IsAbs(o.Guest) {
		return &cmdutil.UsageError{Err: fmt.Errorf("GUEST_PATH %q must be the absolute path in the VM (asb mount ls lists them)", o.Guest)}
	}
	f, release, err := cmdutil.EditFolder(ctx, o.Factory, o.Dir, "asb mount rm")
	if err != nil {
		return err
	}
	defer release()
	warns, err := f.RemoveMount(o.Guest)
	if err != nil {
		return err
	}
	cmdutil.PrintWarnings(o.Factory.IO.ErrOut, warns)
	w := o.Factory.IO.Out
	fmt.Fprintf(w, "removed from mounts: %s (the host folder is untouched)\n\n", path.Clean(o.Guest))
	f.Summarize().PrintMounts(w)
	return nil
}
