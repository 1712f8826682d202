// Package initcmd is `asb init`: lay down an outer folder for an agent.
package initcmd

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/runner"
	"github.com/agents-sandbox/asb/schema"
)

// Options are the parsed command line of `asb init`.
type Options struct {
	IO        *cmdutil.IOStreams
	Templates fs.FS
	Getwd     func() (string, error)

	Dir     string
	Init    schema.InitOptions
	Secrets []string // raw --secret values
	// WorkspaceRemote names the remote of a local --workspace checkout
	// whose URL is recorded for teammates ("": origin).
	WorkspaceRemote string
	DryRun          bool
	Force           bool
	NoGit           bool
	// ImportHostConfig copies the agent's settings from the host's $HOME.
	ImportHostConfig bool
	Git              runner.Git
	Getenv           func(string) string
	Agents           []schema.Agent
	Version          string // asb's, for the record
	MachinePolicy    string // the administrator's policy file (Factory's)
	// changed reports whether a flag was given (re-init applies those to
	// the files the user edited); nil: none was.
	changed func(flag string) bool
}

// NewCmd returns `asb init`. runF replaces the run function in tests.
func NewCmd(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	def := generator.DefaultOptions("", "")
	opts := &Options{IO: f.IO, Templates: f.Templates, Getwd: f.Getwd, Getenv: f.Getenv, Init: def, Version: f.Version, MachinePolicy: f.MachinePolicy}
	agents, _ := generator.Agents(f.Templates)
	cmd := &cobra.Command{
		Use:     "init --agent AGENT [DIR]",
		Short:   "Lay down an outer folder that runs an agent in a microVM",
		Long:    initLong(agents),
		Example: initExample,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 1 {
				return &cmdutil.UsageError{Err: fmt.Errorf("init takes one DIR, got %d arguments (%s): quote a path with spaces; run '%s --help' for usage",
					len(args), strings.Join(args, " "), c.CommandPath())}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Dir = args[0]
			}
			opts.changed = cmd.Flags().Changed
			opts.Agents = cmdutil.Agents(f) // here, not above: every command builds this one
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	// One line per mistake, the usage hint on the same line.
	cmd.SetFlagErrorFunc(cmdutil.FlagError) // also when used without root (tests)
	addFlags(cmd, opts, def, agents)
	return cmd
}

// Run lays down the outer folder: every value is checked and the plan
// rendered before anything is written; then, holding the folder's lock,
// the write (write.go). Into a new folder, git init begins first
// (early.go), and a failed check takes it back.
func Run(ctx context.Context, o *Options) error {
	if o.Init.Agent == "" {
		// A clone of a shared outer folder: set it up, as asb sync does.
		if dir, err := o.absDir(); err == nil && fileExists(filepath.Join(dir, schema.RecordFile)) {
			fmt.Fprintln(o.IO.ErrOut, "asb: this is an outer folder made by asb ("+schema.RecordFile+"): setting up this clone, as asb sync does")
			if err := cmdutil.Gate(ctx, o.IO, o.judge(), dir, cmdutil.IsTerminal(o.IO.In), false); err != nil {
				return err
			}
			return outer.Sync(ctx, dir, o.Git, outer.Options{Getenv: o.Getenv, Agents: o.Agents}, o.IO.Out)
		}
	}
	e, err := o.startEarly(ctx)
	if err != nil {
		return err
	}
	p, err := o.prepare()
	if err != nil {
		return e.abandon(err)
	}
	if o.DryRun {
		return o.dryRun(ctx, p)
	}
	var lock *runner.Lock
	if e != nil {
		lock = e.lock
	} else if lock, err = runner.LockFolder(ctx, p.dir, "asb init", o.IO.ErrOut); err != nil {
		return err
	}
	defer lock.Release()
	keep := o.keepApproval(p.dir)
	res, err := o.write(ctx, p, e.pending())
	if err != nil {
		return err
	}
	re, err := o.reapply(p, res)
	switch {
	case err != nil:
	case res.vmOrigin != "":
		fmt.Fprintf(o.IO.ErrOut, "asb: %s now records workspace/'s origin %s, read from workspace/.git, which the VM can write: asb has not approved the folder; check the origin, then run asb trust\n",
			schema.RecordFile, schema.RedactOrigin(res.vmOrigin))
	default:
		if err := keep(); err != nil {
			fmt.Fprintf(o.IO.ErrOut, "asb: warning: the folder was written but its approval was not recorded (asb trust records it): %v\n", err)
		}
	}
	if ferr := res.finish(); ferr != nil {
		return ferr // git init failed: what this run wrote is taken back
	}
	if err != nil {
		return err
	}
	report(o.IO.Out, res.changes, false)
	p.imported.report(o.IO.Out)
	reportReapplied(o.IO.Out, re)
	nextSteps(o.IO.Out, o, p.plan, res)
	if len(re.left) > 0 {
		return &NotAppliedError{Left: re.left}
	}
	return nil
}

// prepared is a run of init whose inputs all checked out.
type prepared struct {
	dir      string
	plan     *generator.Plan
	imported *hostImport // --import-host-config
}

// prepare checks every input and renders the plan; nothing is written.
func (o *Options) prepare() (*prepared, error) {
	if o.Init.Agent == "" {
		agents, _ := generator.Agents(o.Templates)
		return nil, &cmdutil.UsageError{Err: fmt.Errorf("--agent is required; choose one of: %s", strings.Join(agents, ", "))}
	}
	dir, err := o.absDir()
	if err != nil {
		return nil, err
	}
	if o.Init.Name == "" {
		o.Init.Name = filepath.Base(dir)
		if re := schema.ProjectName(o.Init.Name); re != nil {
			return nil, fmt.Errorf("the folder name %q is not a project name: %s; pass --name, e.g. --name %s",
				o.Init.Name, re.Fix, suggestName(o.Init.Name))
		}
	}
	for _, s := range o.Secrets {
		spec, err := schema.ParseSecretSpec(s)
		if err != nil {
			return nil, err
		}
		o.Init.Secrets = append(o.Init.Secrets, spec)
	}
	if err := o.resolveWorkspace(); err != nil {
		return nil, err
	}
	if err := o.checkWorkspaceRemote(); err != nil {
		return nil, err
	}
	plan, err := generator.Render(o.Templates, o.Init)
	if err != nil {
		return nil, err
	}
	if err := o.checkPolicy(dir, plan); err != nil {
		return nil, err
	}
	var imported *hostImport
	if o.ImportHostConfig {
		if imported, err = o.importHostConfig(plan); err != nil {
			return nil, err
		}
	}
	if o.Init.Workspace != "" {
		if err := checkWorkspaceEmpty(dir); err != nil {
			return nil, err
		}
	}
	if !o.DryRun && (o.Init.Workspace != "" || !o.NoGit) {
		// Before anything is written: a missing git would otherwise fail
		// after the folder is laid down.
		if _, err := exec.LookPath(gitBin(o.Git)); err != nil {
			return nil, fmt.Errorf("git is not installed (or not on PATH): install it, or pass --no-git (and drop --workspace)")
		}
	}
	return &prepared{dir: dir, plan: plan, imported: imported}, nil
}

// resolveWorkspace checks --workspace and makes a local path absolute.
func (o *Options) resolveWorkspace() error {
	if err := checkWorkspaceArg(o.Init.Workspace); err != nil {
		return err
	}
	if o.Init.Workspace == "" || looksLikeURL(o.Init.Workspace) {
		return nil
	}
	src, err := filepath.Abs(o.Init.Workspace)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(src); err != nil || !fi.IsDir() {
		return fmt.Errorf("--workspace %q is neither a URL nor a folder; give a git URL, or the path of a checkout or a folder of yours", o.Init.Workspace)
	}
	o.Init.Workspace = src
	return nil
}

// dryRun says what init would do, and writes nothing.
func (o *Options) dryRun(ctx context.Context, p *prepared) error {
	if why := heldProject(ctx, o.Git, p.dir, p.plan); why != "" {
		return projectError(o, p.dir, why)
	}
	changes, err := generator.Apply(ctx, p.dir, p.plan, generator.WriteOptions{DryRun: true, Force: o.Force})
	if err != nil {
		return err
	}
	report(o.IO.Out, changes, true)
	p.imported.report(o.IO.Out)
	if o.Init.Workspace != "" {
		verb := "clone"
		if !looksLikeURL(o.Init.Workspace) && !runner.IsRepoRoot(o.Init.Workspace) {
			verb = "copy"
		}
		fmt.Fprintf(o.IO.Out, "would %s %s into workspace/\n", verb, o.Init.Workspace)
	}
	if !o.NoGit && !o.Git.IsRepo(ctx, p.dir) {
		fmt.Fprintln(o.IO.Out, "would run git init")
	}
	fmt.Fprintln(o.IO.Out, "dry run: nothing was written")
	return nil
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// checkWorkspaceRemote refuses --workspace-remote without a local checkout
// to name it in, or a name git would not take for a remote.
func (o *Options) checkWorkspaceRemote() error {
	r := o.WorkspaceRemote
	if r == "" {
		return nil
	}
	if o.Init.Workspace == "" || looksLikeURL(o.Init.Workspace) {
		return &cmdutil.UsageError{Err: fmt.Errorf("--workspace-remote %s names a remote of a local checkout: give its path with --workspace PATH", r)}
	}
	if strings.HasPrefix(r, "-") || strings.IndexFunc(r, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("._-", c))
	}) >= 0 {
		return &cmdutil.UsageError{Err: fmt.Errorf("--workspace-remote %q is not a remote name (letters, digits, '.', '_' and '-', not first)", r)}
	}
	return nil
}
