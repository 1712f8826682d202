package initcmd

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/schema"
)

// initLong is the help of asb init: what the outer folder holds and how a
// second run behaves.
func initLong(agents []string) string {
	return `Lay down an outer folder for AGENT in DIR (default: the current folder,
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
FILE.orig copy. Known agents: ` + strings.Join(agents, ", ") + `.`
}

const initExample = `  # A new outer folder for OpenCode
  asb init --agent opencode myproj

  # See what would be written, write nothing
  asb init --agent opencode --dry-run myproj

  # Clone the project into workspace/, give the VM more room, and let the
  # agent use a GitHub token (sent only to GitHub's API)
  asb init --agent opencode --workspace https://github.com/me/app.git \
    --cpus 4 --memory 8G --secret GITHUB_TOKEN@api.github.com,github.com myproj

  # Your own checkout as the workspace: workspace/ is a clone of it, and
  # asb.yaml records its remote (origin) for teammates, never the path
  asb init --agent opencode --workspace ~/src/myapp myapp-sandbox

  # Allow one more host, forward the dev server's port
  asb init --agent opencode --allow registry.npmjs.org --port 5173:5173 myproj`

// addFlags declares init's flags; def gives their defaults.
func addFlags(cmd *cobra.Command, opts *Options, def schema.InitOptions, agents []string) {
	fl := cmd.Flags()
	fl.StringVar(&opts.Init.Agent, "agent", "", "agent preset: "+strings.Join(agents, ", ")+" (required)")
	fl.StringVar(&opts.Init.Name, "name", "", "project name: VM, volume and image names derive from it (default: the folder's name)")
	fl.IntVar(&opts.Init.CPUs, "cpus", def.CPUs, "virtual CPUs of the VM")
	fl.StringVar(&opts.Init.Memory, "memory", def.Memory, "memory of the VM, e.g. 4G or 512M")
	fl.StringArrayVar(&opts.Secrets, "secret", nil, "bind a credential: NAME@HOST[,HOST…]; the value is sent only to those hosts (repeatable)")
	fl.StringVar(&opts.Init.Network, "network", def.Network, "egress: allow (deny all but the agent's and secrets' hosts), balanced (allow plus common development hosts: package registries, GitHub), public (the whole internet) or none")
	fl.StringArrayVar(&opts.Init.Allow, "allow", nil, "allow egress to HOST, e.g. registry.npmjs.org or *.example.com (repeatable)")
	fl.StringArrayVar(&opts.Init.Ports, "port", nil, "forward a host port to the VM: HOST:GUEST (repeatable)")
	fl.StringVar(&opts.Init.Workspace, "workspace", "", "workspace/ from a git URL, or from PATH: a clone of your checkout (its remote recorded for teammates) or a copy of a plain folder (default: an empty workspace/)")
	fl.StringVar(&opts.WorkspaceRemote, "workspace-remote", "", "the remote of --workspace PATH's checkout whose URL teammates clone (default: origin)")
	fl.StringVar(&opts.Init.BaseImage, "base-image", def.BaseImage, "base image of toolchain/Dockerfile")
	fl.StringVar(&opts.Init.AgentVersion, "agent-version", "", "version of the agent installed in the image (default: the preset's pin)")
	fl.StringVar(&opts.Init.IdleTimeout, "idle-timeout", "", "stop the VM after this long with no client attached, e.g. 2h (default "+schema.DefaultIdleTimeout+"; never while a session is open)")
	fl.StringVar(&opts.Init.RootDisk, "root-disk", "", "the VM's root disk, e.g. 16G (default "+schema.DefaultRootDisk+")")
	fl.StringVar(&opts.Init.TmpSize, "tmp-size", "", "make /tmp a tmpfs of this size in the VM's memory, e.g. 1G (default: /tmp on the root disk)")
	fl.StringVar(&opts.Init.WorkspaceQuota, "workspace-quota", "", "the most the VM may add to workspace/, e.g. 20G (default: msb's default for a bind)")
	fl.StringVar(&opts.Init.ContainerDisk, "container-disk", "", "disk for containers run inside the VM, e.g. 16G (default "+schema.DefaultContainerDisk+")")
	fl.BoolVar(&opts.DryRun, "dry-run", false, "print each file, its mode and what would happen; write nothing")
	fl.BoolVar(&opts.Force, "force", false, "overwrite files you edited (a FILE.orig copy is kept)")
	fl.BoolVar(&opts.NoGit, "no-git", false, "do not make the folder a git repository")
	fl.BoolVar(&opts.ImportHostConfig, "import-host-config", false, "copy the agent's settings from your $HOME (never credentials or sessions: each is named, and replaced by a variable where the agent reads one)")
	_ = cmd.RegisterFlagCompletionFunc("agent", cobra.FixedCompletions(agents, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("network", cobra.FixedCompletions([]string{"allow", "balanced", "public", "none"}, cobra.ShellCompDirectiveNoFileComp))
}
