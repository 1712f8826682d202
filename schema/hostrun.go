package schema

import "strings"

// HostRun is a file or folder of a project that a tool on the host runs or
// obeys when the user opens, builds or commits the project: what the agent
// in the VM can write into workspace/ to reach the host through the user's
// own tools. asb lists the ones that changed so the user looks before
// running them (docs/vm-repositories.md).
type HostRun struct {
	// Path is slash-separated, relative to the project's top; a trailing /
	// marks a folder (everything under it).
	Path string `yaml:"path" json:"path" validate:"required"`
	// Why names the tool and what it does with the file.
	Why string `yaml:"why" json:"why" validate:"required"`
}

// BaseHostRun is the table's part that every project has; each agent
// preset adds its own host-side config (host_run in
// templates/agents/NAME/agent.yaml), for the user's own agent on the host.
var BaseHostRun = []HostRun{
	{".envrc", "direnv runs it when you enter the folder"},
	{".env", "docker compose, direnv's dotenv and many frameworks set its variables (NODE_OPTIONS…) for what they run"},
	{".vscode/", "VS Code runs its tasks and launch configurations, and its settings point tools at programs"},
	{".idea/", "JetBrains IDEs run its run configurations, external tools and file watchers"},
	{".devcontainer/", "Dev Containers run its commands and mount what it names"},
	{".husky/", "husky's git hooks, run by your git"},
	{".githooks/", "git hooks a setup script points core.hooksPath at"},
	{".pre-commit-config.yaml", "pre-commit runs the hooks it lists"},
	{"lefthook.yml", "lefthook runs the hooks it lists"},
	{"Makefile", "make runs its recipes"},
	{"makefile", "make runs its recipes"},
	{"GNUmakefile", "make runs its recipes"},
	{"Taskfile.yml", "go-task runs its tasks"},
	{"justfile", "just runs its recipes"},
	{"package.json", "npm, yarn and pnpm run its scripts (install runs its install scripts)"},
	{".npmrc", "npm obeys it (script-shell, node-options, registry)"},
	{".yarnrc.yml", "yarn runs the yarnPath and plugins it names"},
	{".cargo/config.toml", "cargo runs its runner, rustc-wrapper and aliases"},
	{".cargo/config", "cargo runs its runner, rustc-wrapper and aliases"},
	{"mise.toml", "mise sets its environment and runs its hooks and tasks"},
	{".mise.toml", "mise sets its environment and runs its hooks and tasks"},
	{".tool-versions", "asdf and mise install and run the versions it names"},
	{".github/workflows/", "GitHub Actions runs them on a push, with the repository's secrets"},
	{".gitlab-ci.yml", "GitLab CI runs it on a push, with the project's variables"},
	{".gitattributes", "git runs the filters and diff drivers it selects, where a config defines them"},
	{".gitmodules", "git submodule update clones the URLs it names"},
	{".gitconfig", "a project's git config, which a setup may include"},
}

// HostRunTable is the whole table: the base part and every preset's.
type HostRunTable []HostRun

// NewHostRunTable is the table of BaseHostRun and each preset's host_run,
// in that order, each path once (its first entry).
func NewHostRunTable(presets ...[]HostRun) HostRunTable {
	table := append(HostRunTable(nil), BaseHostRun...)
	seen := map[string]bool{}
	for _, e := range table {
		seen[e.Path] = true
	}
	for _, p := range presets {
		for _, e := range p {
			if !seen[e.Path] {
				seen[e.Path] = true
				table = append(table, e)
			}
		}
	}
	return table
}

// Match returns the entry that path (slash-separated, relative to the
// project's top) falls under: the entry itself or, for a folder, anything
// under it; at the top only (anywhere false), or at any depth (a
// package.json of a package in a monorepo).
func (t HostRunTable) Match(path string, anywhere bool) (HostRun, bool) {
	for _, e := range t {
		name := strings.TrimSuffix(e.Path, "/")
		dir := strings.HasSuffix(e.Path, "/")
		switch {
		case !dir && (path == name || (anywhere && strings.HasSuffix(path, "/"+name))):
			return e, true
		case dir && (strings.HasPrefix(path, name+"/") || (anywhere && strings.Contains(path, "/"+name+"/"))):
			return e, true
		}
	}
	return HostRun{}, false
}
