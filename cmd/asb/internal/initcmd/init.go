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
	DryRun  bool
	Force   bool
	NoGit   bool
	Git     runner.Git
	Getenv  func(string) string
	Agents  []schema.Agent
	// changed reports whether a flag was given (re-init applies those to
	// the files the user edited); nil: none was.
	changed func(flag string) bool
}

// NewCmd returns `asb init`. runF replaces the run function in tests.
func NewCmd(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	def := generator.DefaultOptions("", "")
	opts := &Options{IO: f.IO, Templates: f.Templates, Getwd: f.Getwd, Getenv: f.Getenv, Init: def}
	agents, _ := generator.Agents(f.Templates)
	cmd := &cobra.Command{
		Use:   "init --agent AGENT [DIR]",
		Short: "Lay down an outer folder that runs an agent in a microVM",
		Long: `Lay down an outer folder for AGENT in DIR (default: the current folder,
created if missing). The folder holds everything the VM is made of, and is
meant to be committed as its own repository and shared with a team:

  sandbox.yaml     the VM: image, CPUs, memory, mounts, network policy, ports
  secrets.yaml     credential bindings: variable, allowed hosts, substitution
  secrets.env      the real values: host only, mode 0600, git-ignored
  toolchain/       the VM image (Dockerfile, containers.conf, .dockerignore)
  AGENT/           the agent's config, mounted read-only
  workspace/       your project, mounted read-write at /workspace
  Taskfile.yml     the tasks 'asb task' runs; .gitignore; README.md

Nothing outside workspace/ and the agent's config is visible to the VM, and
egress is denied except to the agent's and the secrets' hosts.

Running init again is safe: files you edited are kept (and reported), the
others are brought up to date. --force overwrites edited files, keeping a
FILE.orig copy. Known agents: ` + strings.Join(agents, ", ") + `.`,
		Example: `  # A new outer folder for OpenCode
  asb init --agent opencode myproj

  # See what would be written, write nothing
  asb init --agent opencode --dry-run myproj

  # Clone the project into workspace/, give the VM more room, and let the
  # agent use a GitHub token (sent only to GitHub's API)
  asb init --agent opencode --workspace https://github.com/me/app.git \
    --cpus 4 --memory 8G --secret GITHUB_TOKEN@api.github.com,github.com myproj

  # Allow one more host, forward the dev server's port
  asb init --agent opencode --allow registry.npmjs.org --port 5173:5173 myproj`,
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
	fl := cmd.Flags()
	fl.StringVar(&opts.Init.Agent, "agent", "", "agent preset: "+strings.Join(agents, ", ")+" (required)")
	fl.StringVar(&opts.Init.Name, "name", "", "project name: VM, volume and image names derive from it (default: the folder's name)")
	fl.IntVar(&opts.Init.CPUs, "cpus", def.CPUs, "virtual CPUs of the VM")
	fl.StringVar(&opts.Init.Memory, "memory", def.Memory, "memory of the VM, e.g. 4G or 512M")
	fl.StringArrayVar(&opts.Secrets, "secret", nil, "bind a credential: NAME@HOST[,HOST…]; the value is sent only to those hosts (repeatable)")
	fl.StringVar(&opts.Init.Network, "network", def.Network, "egress: allow (deny all but listed hosts), public (the whole internet) or none")
	fl.StringArrayVar(&opts.Init.Allow, "allow", nil, "allow egress to HOST, e.g. registry.npmjs.org or *.example.com (repeatable)")
	fl.StringArrayVar(&opts.Init.Ports, "port", nil, "forward a host port to the VM: HOST:GUEST (repeatable)")
	fl.StringVar(&opts.Init.Workspace, "workspace", "", "git clone URL or PATH into workspace/ (default: an empty workspace/)")
	fl.StringVar(&opts.Init.BaseImage, "base-image", def.BaseImage, "base image of toolchain/Dockerfile")
	fl.StringVar(&opts.Init.AgentVersion, "agent-version", "", "version of the agent installed in the image (default: the preset's pin)")
	fl.BoolVar(&opts.DryRun, "dry-run", false, "print each file, its mode and what would happen; write nothing")
	fl.BoolVar(&opts.Force, "force", false, "overwrite files you edited (a FILE.orig copy is kept)")
	fl.BoolVar(&opts.NoGit, "no-git", false, "do not make the folder a git repository")
	_ = cmd.RegisterFlagCompletionFunc("agent", cobra.FixedCompletions(agents, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("network", cobra.FixedCompletions([]string{"allow", "public", "none"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// Run lays down the outer folder: every value is checked and the plan
// rendered before anything is written; then, holding the folder's lock,
// the write (write.go).
func Run(ctx context.Context, o *Options) error {
	p, err := o.prepare()
	if err != nil {
		return err
	}
	if o.DryRun {
		return o.dryRun(ctx, p)
	}
	lock, err := runner.LockFolder(ctx, p.dir, "asb init", o.IO.ErrOut)
	if err != nil {
		return err
	}
	defer lock.Release()
	res, err := o.write(ctx, p)
	if err != nil {
		return err
	}
	re, err := o.reapply(p, res)
	if err != nil {
		return err
	}
	report(o.IO.Out, res.changes, false)
	reportReapplied(o.IO.Out, re)
	nextSteps(o.IO.Out, o, p.plan, res)
	if len(re.left) > 0 {
		return &NotAppliedError{Left: re.left}
	}
	return nil
}

// prepared is a run of init whose inputs all checked out.
type prepared struct {
	dir  string
	plan *generator.Plan
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
		if !schema.ValidProjectName(o.Init.Name) {
			return nil, fmt.Errorf("the folder name %q is not a valid project name (lowercase letters, digits and dashes); pass --name, e.g. --name %s",
				o.Init.Name, suggestName(o.Init.Name))
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
	plan, err := generator.Render(o.Templates, o.Init)
	if err != nil {
		return nil, err
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
	return &prepared{dir: dir, plan: plan}, nil
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
		return fmt.Errorf("--workspace %q is neither a URL nor a folder; give a git URL or the path of a local repository", o.Init.Workspace)
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
	if o.Init.Workspace != "" {
		fmt.Fprintf(o.IO.Out, "would clone %s into workspace/\n", o.Init.Workspace)
	}
	if !o.NoGit && !o.Git.IsRepo(ctx, p.dir) {
		fmt.Fprintln(o.IO.Out, "would run git init")
	}
	fmt.Fprintln(o.IO.Out, "dry run: nothing was written")
	return nil
}
