// Package initcmd is `asb init`: lay down an outer folder for an agent.
package initcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
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
}

// NewCmd returns `asb init`. runF replaces the run function in tests.
func NewCmd(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	def := generator.DefaultOptions("", "")
	opts := &Options{IO: f.IO, Templates: f.Templates, Getwd: f.Getwd, Init: def}
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

// Run lays down the outer folder.
func Run(ctx context.Context, o *Options) error {
	if o.Init.Agent == "" {
		agents, _ := generator.Agents(o.Templates)
		return &cmdutil.UsageError{Err: fmt.Errorf("--agent is required; choose one of: %s", strings.Join(agents, ", "))}
	}
	dir, err := o.absDir()
	if err != nil {
		return err
	}
	if o.Init.Name == "" {
		o.Init.Name = filepath.Base(dir)
		if !schema.ValidProjectName(o.Init.Name) {
			return fmt.Errorf("the folder name %q is not a valid project name (lowercase letters, digits and dashes); pass --name, e.g. --name %s",
				o.Init.Name, suggestName(o.Init.Name))
		}
	}
	for _, s := range o.Secrets {
		spec, err := schema.ParseSecretSpec(s)
		if err != nil {
			return err
		}
		o.Init.Secrets = append(o.Init.Secrets, spec)
	}
	if err := checkWorkspaceArg(o.Init.Workspace); err != nil {
		return err
	}
	if o.Init.Workspace != "" && !looksLikeURL(o.Init.Workspace) {
		src, err := filepath.Abs(o.Init.Workspace)
		if err != nil {
			return err
		}
		if fi, err := os.Stat(src); err != nil || !fi.IsDir() {
			return fmt.Errorf("--workspace %q is neither a URL nor a folder; give a git URL or the path of a local repository", o.Init.Workspace)
		}
		o.Init.Workspace = src
	}
	plan, err := generator.Render(o.Templates, o.Init)
	if err != nil {
		return err
	}
	if o.Init.Workspace != "" {
		if err := checkWorkspaceEmpty(dir); err != nil {
			return err
		}
	}
	needGit := o.Init.Workspace != "" || (!o.NoGit && !runner.IsRepoRoot(dir))
	if needGit && !o.DryRun {
		// Before anything is written: a missing git would otherwise fail
		// after the folder is laid down.
		if _, err := exec.LookPath(gitBin(o.Git)); err != nil {
			return fmt.Errorf("git is not installed (or not on PATH): install it, or pass --no-git (and drop --workspace)")
		}
	}
	wopts := generator.WriteOptions{DryRun: o.DryRun, Force: o.Force}
	if o.DryRun {
		changes, err := generator.Apply(ctx, dir, plan, wopts)
		if err != nil {
			return err
		}
		report(o.IO.Out, changes, true)
		if o.Init.Workspace != "" {
			fmt.Fprintf(o.IO.Out, "would clone %s into workspace/\n", o.Init.Workspace)
		}
		if !o.NoGit && !runner.IsRepoRoot(dir) {
			fmt.Fprintln(o.IO.Out, "would run git init")
		}
		fmt.Fprintln(o.IO.Out, "dry run: nothing was written")
		return nil
	}

	// Clone first, beside the target, so a failed clone writes nothing.
	var clone string
	if o.Init.Workspace != "" {
		parent, err := existingParent(dir)
		if err != nil {
			return err
		}
		tmp, err := os.MkdirTemp(parent, ".asb-clone-*")
		if err != nil {
			return fmt.Errorf("prepare the clone: %w", err)
		}
		defer os.RemoveAll(tmp)
		clone = filepath.Join(tmp, "workspace")
		if err := o.Git.Clone(ctx, o.Init.Workspace, clone); err != nil {
			return &cloneError{src: o.Init.Workspace, err: err}
		}
	}
	// The outermost folder this run creates (DIR or one of its parents):
	// removing it undoes the run when a step after Apply fails.
	created := ""
	for p := dir; !dirExists(p); p = filepath.Dir(p) {
		created = p
		if filepath.Dir(p) == p {
			break
		}
	}
	changes, err := generator.Apply(ctx, dir, plan, wopts)
	if err != nil {
		return err
	}
	undo := func(cause error) error {
		if created != "" {
			_ = os.RemoveAll(created)
		}
		return cause
	}
	if clone != "" {
		ws := filepath.Join(dir, "workspace")
		if err := os.Remove(ws); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return undo(fmt.Errorf("workspace/: %w", err))
		}
		if err := os.Rename(clone, ws); err != nil {
			return undo(fmt.Errorf("move the clone into workspace/: %w", err))
		}
	}
	if !o.NoGit && !runner.IsRepoRoot(dir) {
		if err := o.Git.Init(ctx, dir); err != nil {
			return undo(err)
		}
	}
	report(o.IO.Out, changes, false)
	nextSteps(o.IO.Out, o, dir, changes)
	return nil
}

func (o *Options) absDir() (string, error) {
	wd, err := o.Getwd()
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	dir := o.Dir
	if dir == "" {
		dir = "."
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(wd, dir)
	}
	dir = filepath.Clean(dir)
	// A path that runs through a regular file can never be created.
	for p := dir; ; p = filepath.Dir(p) {
		if fi, err := os.Stat(p); err == nil {
			if !fi.IsDir() {
				if p == dir {
					return "", fmt.Errorf("%s is a file, not a folder: give init a folder (new or existing)", o.displayDir())
				}
				return "", fmt.Errorf("%s is under %s, which is a file: choose a DIR that is not under a file", o.displayDir(), p)
			}
			break
		}
		if filepath.Dir(p) == p {
			break
		}
	}
	return dir, nil
}

func (o *Options) displayDir() string {
	if o.Dir == "" {
		return "."
	}
	return o.Dir
}

func report(w io.Writer, changes []generator.Change, dry bool) {
	verb := map[generator.Action]string{
		generator.Create: "create", generator.Unchanged: "unchanged", generator.Update: "update",
		generator.Kept: "kept", generator.Overwrite: "overwrite", generator.Conflict: "conflict",
	}
	if dry {
		verb[generator.Create] = "would create"
		verb[generator.Update] = "would update"
		verb[generator.Overwrite] = "would overwrite"
	}
	for _, c := range changes {
		name := c.Path
		if c.Dir && !strings.HasSuffix(name, "/") {
			name += "/"
		}
		line := fmt.Sprintf("%-15s %04o  %s", verb[c.Action], c.Mode.Perm(), name)
		if c.Why != "" {
			line += "  (" + c.Why + ")"
		}
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
}

func nextSteps(w io.Writer, o *Options, dir string, changes []generator.Change) {
	kept := 0
	for _, c := range changes {
		if c.Action == generator.Kept {
			kept++
		}
	}
	if kept > 0 {
		fmt.Fprintf(w, "\n%d file(s) you edited were kept; --force overwrites them (keeping .orig copies).\n", kept)
	}
	rel := o.displayDir()
	fmt.Fprintf(w, "\nNext:\n")
	if rel != "." {
		fmt.Fprintf(w, "  cd %s\n", generator.ShellQuote(rel))
	}
	fmt.Fprintf(w, "  $EDITOR secrets.env      # set the agent's key (or export it)\n")
	fmt.Fprintf(w, "  asb validate             # check the boundary\n")
	fmt.Fprintf(w, "  asb task agent           # build, create and start the VM, attach the agent\n")
	_ = dir
}

func checkWorkspaceEmpty(dir string) error {
	entries, err := os.ReadDir(filepath.Join(dir, "workspace"))
	if err == nil && len(entries) > 0 {
		return fmt.Errorf("--workspace: %s already has files; remove it or drop --workspace", filepath.Join(dir, "workspace"))
	}
	return nil
}

func existingParent(dir string) (string, error) {
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		if dirExists(p) {
			return p, nil
		}
		if filepath.Dir(p) == p {
			return "", fmt.Errorf("no existing parent folder for %s", dir)
		}
	}
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// cloneError is a failed `git clone` of --workspace, told in one line: the
// first line git printed (its "fatal: …"), not the temporary paths.
type cloneError struct {
	src string
	err error
}

func (e *cloneError) Error() string {
	why := e.err.Error()
	var te *runner.ToolError
	if errors.As(e.err, &te) {
		for line := range strings.SplitSeq(te.Output, "\n") {
			if line = strings.TrimSpace(line); line != "" {
				why = line
				break
			}
		}
	}
	return fmt.Sprintf("--workspace: git clone %s failed: %s", e.src, why)
}

func (e *cloneError) Unwrap() error { return e.err }

// ExitCode is 1, like any other failed init, not git's own 128.
func (e *cloneError) ExitCode() int { return 1 }

// checkWorkspaceArg refuses a --workspace that would put a credential or a
// control character into README.md and workspace/.git/config.
func checkWorkspaceArg(ws string) error {
	if ws == "" {
		return nil
	}
	if strings.IndexFunc(ws, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
		return &schema.FieldError{Field: "--workspace", Value: ws, Fix: "a URL or path cannot hold control characters"}
	}
	if u, err := url.Parse(ws); err == nil && u.User != nil {
		if _, hasPassword := u.User.Password(); hasPassword {
			// The value is not echoed: it holds a password or token.
			return &schema.FieldError{Field: "--workspace",
				Fix: "the URL holds a password or token, which would be written to README.md and workspace/.git/config; drop it and let git's credential helper or SSH supply it"}
		}
	}
	return nil
}

func gitBin(g runner.Git) string {
	if g.Bin != "" {
		return g.Bin
	}
	return "git"
}

func looksLikeURL(s string) bool {
	return strings.Contains(s, "://") || (strings.Contains(s, "@") && strings.Contains(s, ":") && !strings.HasPrefix(s, "/"))
}

// suggestName turns a folder name into a valid project name.
func suggestName(s string) string { return schema.SanitizeName(s, 63, "my-project") }
