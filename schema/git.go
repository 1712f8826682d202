package schema

// A cloned outer folder may carry its own .git/config (an archive does,
// and so can a workspace/ a teammate set up), and git runs programs that
// config names: core.fsmonitor on every read of the index (git ls-files,
// git status), hooks, a pager. Looking at a folder (validate, boundary, an
// edit's check) must run nothing of it, so every git asb runs gets these
// options and environment first; command-line -c options override every
// config file.
var safeGitOptions = []string{
	"-c", "core.fsmonitor=false",
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.pager=cat",
	"-c", "protocol.ext.allow=never",
}

// GitArgs returns args (a git subcommand and its arguments) with the
// options that switch off the programs a repository's config may name.
func GitArgs(args ...string) []string {
	return append(append([]string(nil), safeGitOptions...), args...)
}

// GitEnv is added to git's environment: no prompt, no pager, no optional
// index writes while looking.
var GitEnv = []string{"GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "GIT_OPTIONAL_LOCKS=0"}
