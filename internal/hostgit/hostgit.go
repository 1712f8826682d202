// Package hostgit is how asb runs git on the host: one fixed environment
// and one set of options for every git process asb starts (runner.Git, and
// schema's look at the outer folder's own repository).
//
// A repository the VM can write (workspace/.git, a session's checkout) is
// data to asb, never configuration: no git asb runs has its .git as its
// repository (docs/vm-repositories.md). asb's git runs in a repository
// whose config asb wrote (the host repository .asb/git, a session's fresh
// checkout, a temporary folder), or in the outer folder's own repository
// (made by git init or git clone on this machine; the VM never sees the
// outer folder). What reaches those processes from the caller is fixed
// here too: no system or global config (a global core.fsmonitor or
// filter.lfs would run programs on the VM's files), none of the caller's
// GIT_* variables (GIT_DIR, GIT_CONFIG_PARAMETERS, GIT_EXEC_PATH, GIT_SSH…),
// no prompt, no pager.
package hostgit

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/agents-sandbox/asb/internal/proc"
)

// Config is whose configuration files a git process reads.
type Config int

const (
	// AsbOnly reads no system or global config: the repository's own (one
	// asb wrote, or the outer folder's) and the command line only.
	AsbOnly Config = iota
	// UserConfig also reads the user's system and global config, for the
	// two runs that act for the user on something no VM has written: a
	// clone of a remote (the user's credential helper, url rewrites and
	// ssh command reach their host, as their own git clone would) and the
	// git init of a new outer folder (their default branch and template).
	// The caller's GIT_SSH, GIT_SSH_COMMAND, GIT_SSH_VARIANT and
	// GIT_ASKPASS are kept for the same reason.
	UserConfig
)

// options come before every git subcommand: command-line -c options
// override every config file. Most matter only in a repository asb did not
// write (the outer folder's); in asb's own they repeat its config.
var options = []string{
	"-c", "core.fsmonitor=false",
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.pager=cat",
	"-c", "protocol.ext.allow=never",
	// No global attributes or ignore file (git reads them from
	// $XDG_CONFIG_HOME/git even without a global config).
	"-c", "core.attributesFile=" + os.DevNull,
	"-c", "core.excludesFile=" + os.DevNull,
	// No attributes from a tree either: git 2.43.0 reads a bare
	// repository's from HEAD:.gitattributes (reverted later), and the VM
	// sets the host repository's HEAD; `* -diff` there would show a session's
	// diff as "Binary files differ". A tree-ish that does not resolve
	// (the empty tree's SHA-1 name, in a SHA-256 repository) is ignored
	// alike: no tree's attributes. Older git ignores the key.
	"-c", "attr.tree=4b825dc642cb6eb9a060e54bf8d69288fbee4904",
	"-c", "submodule.recurse=false",
	"-c", "diff.ignoreSubmodules=all",
	"-c", "gc.auto=0",
	"-c", "maintenance.auto=false",
}

// Args returns args (a git subcommand and its arguments) after the options
// every git asb runs gets.
func Args(args ...string) []string {
	return append(append([]string(nil), options...), args...)
}

// identity is the author and committer of anything asb's git records
// (a reflog entry of the host repository); asb makes no commit.
var identity = []string{
	"GIT_AUTHOR_NAME=asb", "GIT_AUTHOR_EMAIL=asb@localhost",
	"GIT_COMMITTER_NAME=asb", "GIT_COMMITTER_EMAIL=asb@localhost",
}

// userKept are the caller's variables a UserConfig run keeps: where the
// user's config is (GIT_CONFIG_GLOBAL, GIT_CONFIG_COUNT…), their template,
// how they reach their remote.
func userKept(k string) bool {
	switch k {
	case "GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSH_VARIANT", "GIT_ASKPASS", "GIT_TEMPLATE_DIR":
		return true
	}
	return strings.HasPrefix(k, "GIT_CONFIG")
}

// Environ returns parent (an environment, as os.Environ) fixed for a git
// process of asb's: every GIT_* variable dropped (but the user's ssh and
// askpass for UserConfig), PAGER dropped, and asb's own set.
func Environ(parent []string, c Config) []string {
	env := make([]string, 0, len(parent)+12)
	for _, kv := range parent {
		k, _, _ := strings.Cut(kv, "=")
		if k == "PAGER" || (strings.HasPrefix(k, "GIT_") && !(c == UserConfig && userKept(k))) {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "PAGER=cat", "GIT_OPTIONAL_LOCKS=0")
	if c == AsbOnly {
		env = append(env, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
		env = append(env, identity...)
	}
	return env
}

// Command is git (bin, "git" when empty) with args after Args' options,
// run in dir with Environ's environment of this process's, ending as
// every process of asb's does (internal/proc).
func Command(ctx context.Context, bin, dir string, c Config, args ...string) *exec.Cmd {
	if bin == "" {
		bin = "git"
	}
	cmd := proc.Command(ctx, bin, Args(args...)...)
	cmd.Dir = dir
	cmd.Env = Environ(os.Environ(), c)
	return cmd
}

// DotGitAbove is the nearest folder at or above dir (taken as it is: resolve
// its links first, as git sees the working folder) that holds a .git entry,
// with that entry's Lstat; ok is false when no folder up to the root has
// one. Every git asb runs has the caller's GIT_* variables removed
// (Environ), so that is where git's own discovery looks.
func DotGitAbove(dir string) (parent string, fi os.FileInfo, ok bool) {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if fi, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d, fi, true
		}
		if filepath.Dir(d) == d {
			return "", nil, false
		}
	}
}

// MayBeInWorkTree reports whether git could find a repository from dir:
// false means `git rev-parse --is-inside-work-tree` would say no, without
// starting git. True is only "maybe": ask git, which knows ceilings, file
// system boundaries and broken links.
func MayBeInWorkTree(dir string) bool {
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	_, _, ok := DotGitAbove(dir)
	return ok
}
