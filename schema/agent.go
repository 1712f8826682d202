package schema

import (
	"maps"
	"slices"
)

// Agent is the manifest of an agent preset (templates/agents/NAME/agent.yaml).
// Adding an agent is adding a folder with this file and its config templates.
type Agent struct {
	Name        string `yaml:"name" validate:"required,asb_project"`
	Description string `yaml:"description" validate:"required"`
	// ConfigDir is the folder in the outer folder holding the agent's config,
	// mounted read-only at MountTarget.
	ConfigDir string `yaml:"config_dir" validate:"required,asb_project"`
	// (/home/dev/… for an agent that only reads it there, /etc/NAME for one
	// that writes into its home folder and reads a system layer there).
	MountTarget string `yaml:"mount_target" validate:"required,asb_agent_target"`
	// Command is the argv that starts the agent in the VM.
	Command []string `yaml:"command" validate:"required,min=1"`
	// Bin is the program the package installs, run with --version when the
	// image is built (default: Command[0]).
	Bin string `yaml:"bin" validate:"omitempty,asb_relpath,excludes=/"`
	// Node is the Node.js version the agent needs when Debian's (20) is too
	// old: the image installs it from the npm registry's node package.
	Node string `yaml:"node" validate:"omitempty,asb_version"`
	// Apt are Debian packages the agent uses besides the image's own (in a
	// layer of their own, so the common layers stay shared).
	Apt []string `yaml:"apt" validate:"dive,asb_project"`
	// KeyVar is the environment variable holding the provider key.
	KeyVar string `yaml:"key_var" validate:"asb_secret"`
	// KeyHeaders are the only request headers the key is substituted in
	// where msb can narrow it (0.7.8+, substitution.header_fields).
	KeyHeaders []string `yaml:"key_headers" validate:"dive,asb_envname|hostname_rfc1123"`
	// Hosts the agent needs to reach; the key is only sent to these.
	Hosts []string `yaml:"hosts" validate:"required,min=1,dive,asb_host"`
	// NPMPackage and Version are installed in the image with npm i -g.
	NPMPackage string `yaml:"npm_package" validate:"required"`
	Version    string `yaml:"version" validate:"required,asb_version"`
	// ImageCleanup are paths under npm's global root the image build removes
	// after installing the package (what the agent never loads, e.g. the
	// second platform build an npm package bundles).
	ImageCleanup []string `yaml:"image_cleanup" validate:"dive,asb_relpath"`
	// Env is set in the image: switches that keep the agent from downloading
	// at run time (the VM's egress is denied but for the listed hosts).
	Env map[string]string `yaml:"env" validate:"dive,keys,asb_envname,endkeys,asb_envvalue"`
	// HostConfig is what `asb init --import-host-config` may copy from the
	// host's own config folder of the agent.
	HostConfig *HostConfig `yaml:"host_config"`
	// Docs is where the agent's configuration is documented.
	Docs string `yaml:"docs"`
	// Serve is how the agent runs as a server that clients attach to
	// (asb serve, asb attach); nil when the agent has none.
	Serve *AgentServe `yaml:"serve"`
	// HostRun are the project files this agent, run on the host, runs or
	// obeys (hooks, MCP servers, instructions): the preset's part of the
	// table asb reviews after the VM wrote the project (HostRunTable).
	HostRun []HostRun `yaml:"host_run" validate:"dive"`
}

// AgentServe is an agent's server mode: the argv that runs it in the VM
// listening on Port of every guest interface, the variable its password
// is read from, the basic-auth user, a path that answers once it is up,
// the host client that attaches to its URL, and the event stream asb reads
// for notifications ("opencode": GET /event, server-sent events).
type AgentServe struct {
	Command     []string `yaml:"command" validate:"required,min=1"`
	Port        int      `yaml:"port" validate:"required,min=1,max=65535"`
	PasswordEnv string   `yaml:"password_env" validate:"required,asb_envname"`
	User        string   `yaml:"user" validate:"required,asb_envname"`
	Health      string   `yaml:"health" validate:"required,startswith=/"`
	Attach      []string `yaml:"attach"`
	Events      string   `yaml:"events" validate:"omitempty,oneof=opencode"`
}

// HostConfig names the agent's settings on the host: the folder (relative
// to $HOME), the entries that are settings (copied), and those known to
// hold credentials or session state (skipped, with the reason). Anything
// else there is skipped too, and named.
type HostConfig struct {
	From    string            `yaml:"from" validate:"required,asb_relpath"`
	Copy    []string          `yaml:"copy" validate:"required,min=1,dive,asb_relpath"`
	Private map[string]string `yaml:"private" validate:"dive,keys,asb_relpath,endkeys,required"`
	// EnvRef is how the agent's settings read an environment variable,
	// NAME standing for its name ({env:NAME}), in the files of
	// EnvRefFiles: a credential found there is replaced by a reference.
	// Empty when the agent has none (the file is then not copied).
	EnvRef      string   `yaml:"env_ref" validate:"omitempty,contains=NAME"`
	EnvRefFiles []string `yaml:"env_ref_files" validate:"dive,asb_relpath"`
}

// Program is the agent's executable: Bin, or the command's first word.
func (a Agent) Program() string {
	if a.Bin != "" {
		return a.Bin
	}
	return a.Command[0]
}

// Clone returns a copy of a that shares no slice, map or pointer with it:
// presets parsed once per process are handed out as clones, so that no
// caller's change reaches another's.
func (a Agent) Clone() Agent {
	a.Command = slices.Clone(a.Command)
	a.Apt = slices.Clone(a.Apt)
	a.KeyHeaders = slices.Clone(a.KeyHeaders)
	a.Hosts = slices.Clone(a.Hosts)
	a.ImageCleanup = slices.Clone(a.ImageCleanup)
	a.Env = maps.Clone(a.Env)
	a.HostRun = slices.Clone(a.HostRun)
	if a.HostConfig != nil {
		hc := *a.HostConfig
		hc.Copy = slices.Clone(hc.Copy)
		hc.Private = maps.Clone(hc.Private)
		hc.EnvRefFiles = slices.Clone(hc.EnvRefFiles)
		a.HostConfig = &hc
	}
	if a.Serve != nil {
		s := *a.Serve
		s.Command = slices.Clone(s.Command)
		s.Attach = slices.Clone(s.Attach)
		a.Serve = &s
	}
	return a
}
