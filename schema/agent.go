package schema

// Agent is the manifest of an agent preset (templates/agents/NAME/agent.yaml).
// Adding an agent is adding a folder with this file and its config templates.
type Agent struct {
	Name        string `yaml:"name" validate:"required,asb_project"`
	Description string `yaml:"description" validate:"required"`
	// ConfigDir is the folder in the outer folder holding the agent's config,
	// mounted read-only at MountTarget.
	ConfigDir   string `yaml:"config_dir" validate:"required,asb_project"`
	MountTarget string `yaml:"mount_target" validate:"required,startswith=/"`
	// Command is the argv that starts the agent in the VM.
	Command []string `yaml:"command" validate:"required,min=1"`
	// KeyVar is the environment variable holding the provider key.
	KeyVar string `yaml:"key_var" validate:"asb_secret"`
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
	// Docs is where the agent's configuration is documented.
	Docs string `yaml:"docs"`
}
