package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/rogpeppe/go-internal/testscript"
)

// The hostile VM, for the scripts (hostile_vm_*.txtar): what an agent can
// write into workspace/ or a session's checkout, class by class, and every
// command a user then runs on the host.
//
//	plant CLASS REPO    write CLASS into the repository of the checkout REPO
//	                    as the VM can (its .git and files), each program it
//	                    names the canary ($WORK/canary.sh, which records its
//	                    run under $WORK/canary/); a repository outside the
//	                    folder, $WORK/secret, is what the VM points asb at
//	everything SESSION  run every asb command a user would (and the README's
//	                    host-side git steps in $WORK/mine), in the folder;
//	                    a command may be refused, none may crash
//	intact              the outer folder's own history is as the script's
//	                    `git log` recorded it in $WORK/history (and whole)

// plantClasses are the classes plant knows, each with what it writes.
var plantClasses = map[string]func(ts *testscript.TestScript, repo, canary string){
	"fsmonitor":   plantConfig("[core]\n\tfsmonitor = %s\n"),
	"hooks":       plantHooks,
	"sshcommand":  plantSSH,
	"gpg":         plantGPG,
	"filter":      plantFilter,
	"diff":        plantConfig("[diff]\n\texternal = %[1]s\n[diff \"x\"]\n\ttextconv = %[1]s\n\tcommand = %[1]s\n[merge \"x\"]\n\tdriver = %[1]s\n"),
	"pager":       plantConfig("[core]\n\tpager = %[1]s\n\teditor = %[1]s\n\taskPass = %[1]s\n[pager]\n\tdiff = %[1]s\n\tlog = %[1]s\n\tstatus = %[1]s\n[sequence]\n\teditor = %[1]s\n[credential]\n\thelper = !%[1]s\n"),
	"alias":       plantConfig("[alias]\n\tst = !%[1]s\n\tlg = !%[1]s\n\tstatus = !%[1]s\n"),
	"include":     plantInclude,
	"gc":          plantGC,
	"gitdir":      plantGitdir,
	"alternates":  plantAlternates,
	"linkedrefs":  plantLinkedRefs,
	"commondir":   plantCommondir,
	"submodule":   plantSubmodule,
	"attributes2": plantAttributesOnly,
}

func cmdPlant(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 || plantClasses[args[0]] == nil {
		ts.Fatalf("usage: plant CLASS REPO (CLASS one of %s)", strings.Join(classNames(), ", "))
	}
	work := ts.Getenv("WORK")
	canary := filepath.Join(work, "canary.sh")
	writeExec(ts, canary, fmt.Sprintf("#!/bin/sh\nmkdir -p %[1]s/canary\necho \"$0 $*\" >>%[1]s/canary/ran\nexit 1\n", work))
	secretRepo(ts)
	plantClasses[args[0]](ts, ts.MkAbs(args[1]), canary)
}

func classNames() []string {
	var n []string
	for k := range plantClasses {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

func writeExec(ts *testscript.TestScript, p, content string) {
	ts.Check(os.MkdirAll(filepath.Dir(p), 0o755))
	ts.Check(os.WriteFile(p, []byte(content), 0o755))
}

func appendFile(ts *testscript.TestScript, p, content string) {
	ts.Check(os.MkdirAll(filepath.Dir(p), 0o755))
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	ts.Check(err)
	_, err = f.WriteString(content)
	ts.Check(err)
	ts.Check(f.Close())
}

// vmGit runs git in repo as the VM would (its own config in play), with no
// config of the host's.
func vmGit(ts *testscript.TestScript, repo string, args ...string) string {
	cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=agent", "GIT_AUTHOR_EMAIL=agent@vm", "GIT_COMMITTER_NAME=agent", "GIT_COMMITTER_EMAIL=agent@vm")
	out, err := cmd.CombinedOutput()
	if err != nil {
		ts.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), repo, err, out)
	}
	return strings.TrimSpace(string(out))
}

// secretRepo is a repository of the host outside the folder, with a commit
// whose file the VM must never see: $WORK/secret.
func secretRepo(ts *testscript.TestScript) string {
	dir := filepath.Join(ts.Getenv("WORK"), "secret")
	if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
		return dir
	}
	ts.Check(os.MkdirAll(dir, 0o755))
	ts.Check(os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("SECRET-CANARY-1c9e77 of the host\n"), 0o600))
	vmGit(ts, dir, "init", "-q")
	vmGit(ts, dir, "add", "secret.txt")
	vmGit(ts, dir, "commit", "-qm", "the host's secret")
	vmGit(ts, dir, "repack", "-adq")
	return dir
}

func plantConfig(format string) func(ts *testscript.TestScript, repo, canary string) {
	return func(ts *testscript.TestScript, repo, canary string) {
		appendFile(ts, filepath.Join(repo, ".git", "config"), fmt.Sprintf(format, canary))
	}
}

// plantHooks: every hook name git runs, in .git/hooks and in a folder
// core.hooksPath names.
func plantHooks(ts *testscript.TestScript, repo, canary string) {
	hooks := filepath.Join(repo, ".git", "hooks")
	other := filepath.Join(repo, ".githooks")
	for _, name := range []string{"pre-commit", "post-commit", "post-checkout", "post-merge", "pre-push", "reference-transaction",
		"post-index-change", "pre-auto-gc", "post-rewrite", "fsmonitor-watchman", "push-to-checkout", "pre-receive", "update", "post-update"} {
		writeExec(ts, filepath.Join(hooks, name), "#!/bin/sh\nexec "+canary+" hook-"+name+"\n")
		writeExec(ts, filepath.Join(other, name), "#!/bin/sh\nexec "+canary+" hookspath-"+name+"\n")
	}
	appendFile(ts, filepath.Join(repo, ".git", "config"), "[core]\n\thooksPath = "+other+"\n")
}

// plantSSH: a URL rewrite that turns every path (a fetch of the checkout
// by its host path included) into ssh, whose command is the canary.
func plantSSH(ts *testscript.TestScript, repo, canary string) {
	appendFile(ts, filepath.Join(repo, ".git", "config"), fmt.Sprintf(
		"[core]\n\tsshCommand = %[1]s\n\tgitProxy = %[1]s\n[url \"ssh://evil.invalid/x\"]\n\tinsteadOf = /\n\tpushInsteadOf = /\n[remote \"origin\"]\n\turl = /up\n\tuploadpack = %[1]s\n[protocol]\n\tallow = always\n", canary))
}

// plantGPG: a signed commit on HEAD's branch, and log.showSignature with
// the canary as gpg.
func plantGPG(ts *testscript.TestScript, repo, canary string) {
	tree := vmGit(ts, repo, "rev-parse", "HEAD^{tree}")
	parent := vmGit(ts, repo, "rev-parse", "HEAD")
	obj := fmt.Sprintf("tree %s\nparent %s\nauthor agent <agent@vm> 1700000000 +0000\ncommitter agent <agent@vm> 1700000000 +0000\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n\nsigned by the agent\n", tree, parent)
	p := filepath.Join(ts.Getenv("WORK"), "signed-commit")
	ts.Check(os.WriteFile(p, []byte(obj), 0o644))
	id := vmGit(ts, repo, "hash-object", "-t", "commit", "-w", p)
	vmGit(ts, repo, "update-ref", "HEAD", id)
	appendFile(ts, filepath.Join(repo, ".git", "config"), fmt.Sprintf(
		"[log]\n\tshowSignature = true\n[gpg]\n\tprogram = %[1]s\n[gpg \"ssh\"]\n\tprogram = %[1]s\n[gpg \"x509\"]\n\tprogram = %[1]s\n", canary))
}

// plantFilter: a clean, smudge and process filter the repository's config
// defines, selected by .git/info/attributes and by a committed
// .gitattributes, and a file changed in the work tree (what a status
// runs the clean filter on).
func plantFilter(ts *testscript.TestScript, repo, canary string) {
	appendFile(ts, filepath.Join(repo, ".git", "config"), fmt.Sprintf(
		"[filter \"x\"]\n\tclean = %[1]s\n\tsmudge = %[1]s\n\tprocess = %[1]s\n\trequired = false\n[diff \"x\"]\n\ttextconv = %[1]s\n", canary))
	appendFile(ts, filepath.Join(repo, ".git", "info", "attributes"), "* filter=x diff=x\n")
	ts.Check(os.WriteFile(filepath.Join(repo, ".gitattributes"), []byte("* filter=x diff=x merge=x\n"), 0o644))
	vmGit(ts, repo, "-c", "filter.x.clean=cat", "-c", "filter.x.smudge=cat", "-c", "filter.x.process=", "add", ".gitattributes")
	vmGit(ts, repo, "-c", "filter.x.clean=cat", "-c", "filter.x.smudge=cat", "-c", "filter.x.process=", "commit", "-qm", "attributes")
	appendFile(ts, filepath.Join(repo, "a.txt"), "changed, not committed\n")
}

// plantAttributesOnly: the filter of plantFilter with nothing changed in
// the work tree (what a clean status of a fresh index hashes).
func plantAttributesOnly(ts *testscript.TestScript, repo, canary string) {
	plantFilter(ts, repo, canary)
	vmGit(ts, repo, "-c", "filter.x.clean=cat", "-c", "filter.x.smudge=cat", "-c", "filter.x.process=", "commit", "-qam", "all of it")
}

// plantInclude: config of another file, included (and one by a
// conditional include), naming the canary as fsmonitor and pager.
func plantInclude(ts *testscript.TestScript, repo, canary string) {
	inc := filepath.Join(repo, ".git", "evil.config")
	ts.Check(os.WriteFile(inc, []byte(fmt.Sprintf("[core]\n\tfsmonitor = %[1]s\n\tpager = %[1]s\n[log]\n\tshowSignature = true\n[gpg]\n\tprogram = %[1]s\n", canary)), 0o644))
	appendFile(ts, filepath.Join(repo, ".git", "config"), "[include]\n\tpath = evil.config\n[includeIf \"gitdir:/\"]\n\tpath = "+inc+"\n")
}

// plantGC: automatic gc on every command that may start one, pruning at
// once, through an objects folder that is the outer folder's own
// (a link): what was seen deleting the outer folder's history.
func plantGC(ts *testscript.TestScript, repo, canary string) {
	git := filepath.Join(repo, ".git")
	appendFile(ts, filepath.Join(git, "config"), "[gc]\n\tauto = 1\n\tautoPackLimit = 1\n\tpruneExpire = now\n\treflogExpire = now\n\treflogExpireUnreachable = now\n[maintenance]\n\tauto = true\n")
	ts.Check(os.RemoveAll(filepath.Join(git, "objects")))
	outer, err := filepath.Rel(git, ts.MkAbs("."))
	ts.Check(err)
	ts.Check(os.Symlink(filepath.Join(outer, ".git", "objects"), filepath.Join(git, "objects")))
	_ = os.Remove(filepath.Join(git, "packed-refs"))
	ts.Check(os.RemoveAll(filepath.Join(git, "refs", "heads")))
	ts.Check(os.MkdirAll(filepath.Join(git, "refs", "heads"), 0o755))
	_ = canary
}

// plantGitdir: .git is a gitdir: file naming the secret repository.
func plantGitdir(ts *testscript.TestScript, repo, _ string) {
	secret := secretRepo(ts)
	ts.Check(os.Rename(filepath.Join(repo, ".git"), filepath.Join(repo, ".git-was")))
	ts.Check(os.WriteFile(filepath.Join(repo, ".git"), []byte("gitdir: "+filepath.Join(secret, ".git")+"\n"), 0o644))
}

// plantAlternates: the secret repository's objects as alternates, and a
// branch steal (and HEAD) at its commit.
func plantAlternates(ts *testscript.TestScript, repo, _ string) {
	secret := secretRepo(ts)
	id := vmGit(ts, secret, "rev-parse", "HEAD")
	git := filepath.Join(repo, ".git")
	appendFile(ts, filepath.Join(git, "objects", "info", "alternates"), filepath.Join(secret, ".git", "objects")+"\n")
	ts.Check(os.WriteFile(filepath.Join(git, "refs", "heads", "steal"), []byte(id+"\n"), 0o644))
	ts.Check(os.WriteFile(filepath.Join(git, "HEAD"), []byte("ref: refs/heads/steal\n"), 0o644))
}

// plantLinkedRefs: a branch steal that is a link to the secret
// repository's ref, and its packs linked in.
func plantLinkedRefs(ts *testscript.TestScript, repo, _ string) {
	secret := secretRepo(ts)
	git := filepath.Join(repo, ".git")
	ts.Check(os.Symlink(filepath.Join(secret, ".git", "refs", "heads", currentBranch(ts, secret)), filepath.Join(git, "refs", "heads", "steal")))
	packs, err := filepath.Glob(filepath.Join(secret, ".git", "objects", "pack", "pack-*"))
	ts.Check(err)
	for _, p := range packs {
		ts.Check(os.Symlink(p, filepath.Join(git, "objects", "pack", filepath.Base(p))))
	}
	ts.Check(os.WriteFile(filepath.Join(git, "HEAD"), []byte("ref: refs/heads/steal\n"), 0o644))
}

// plantCommondir: a commondir naming the secret repository's .git.
func plantCommondir(ts *testscript.TestScript, repo, _ string) {
	secret := secretRepo(ts)
	ts.Check(os.WriteFile(filepath.Join(repo, ".git", "commondir"), []byte(filepath.Join(secret, ".git")+"\n"), 0o644))
}

// plantSubmodule: a submodule committed in the checkout, whose own
// repository (in the work tree) names the canary as fsmonitor and hooks,
// with a change in it (what a status of the checkout recurses into).
func plantSubmodule(ts *testscript.TestScript, repo, canary string) {
	sub := filepath.Join(repo, "sub")
	ts.Check(os.MkdirAll(sub, 0o755))
	vmGit(ts, sub, "init", "-q")
	vmGit(ts, sub, "commit", "-q", "--allow-empty", "-m", "sub")
	id := vmGit(ts, sub, "rev-parse", "HEAD")
	vmGit(ts, repo, "update-index", "--add", "--cacheinfo", "160000,"+id+",sub")
	ts.Check(os.WriteFile(filepath.Join(repo, ".gitmodules"), []byte("[submodule \"sub\"]\n\tpath = sub\n\turl = ./sub\n"), 0o644))
	vmGit(ts, repo, "add", ".gitmodules")
	vmGit(ts, repo, "commit", "-qm", "a submodule")
	appendFile(ts, filepath.Join(sub, ".git", "config"), "[core]\n\tfsmonitor = "+canary+"\n\thooksPath = "+filepath.Dir(canary)+"\n")
	appendFile(ts, filepath.Join(sub, "changed"), "x\n")
}

func currentBranch(ts *testscript.TestScript, repo string) string {
	return vmGit(ts, repo, "symbolic-ref", "--short", "HEAD")
}

// userCommands is what a user runs, in the folder, after the VM wrote it.
var userCommands = [][]string{
	{"asb", "session", "new", "two"},
	{"asb", "session", "new", "three", "--base", "steal"},
	{"asb", "session", "ls"},
	{"asb", "session", "ls", "--format", "json"},
	{"asb", "session", "diff", "SESSION"},
	{"asb", "session", "diff", "--stat", "--format", "json", "SESSION"},
	{"asb", "fetch"},
	{"asb", "fetch", "--format", "json"},
	{"asb", "sync"},
	{"asb", "update"},
	{"asb", "ls", "--all"},
	{"asb", "prune", "--dry-run"},
	{"asb", "trust", "--show"},
	{"asb", "init", "--agent", "opencode", "."},
	{"asb", "validate"},
	{"asb", "boundary"},
	{"git", "-C", "$WORK/mine", "fetch", "asb"},
	{"git", "-C", "$WORK/mine", "merge", "--ff-only", "asb/SESSION"},
	{"asb", "session", "rm", "SESSION"},
	{"asb", "session", "rm", "two"},
}

var crashRe = regexp.MustCompile(`panic:|goroutine [0-9]+ \[`)

func cmdEverything(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: everything SESSION")
	}
	mine := filepath.Join(ts.Getenv("WORK"), "mine")
	remote := ts.MkAbs(".asb/git")
	_ = exec.Command("git", "-C", mine, "remote", "add", "asb", remote).Run()
	for _, c := range userCommands {
		argv := make([]string, len(c))
		for i, a := range c {
			argv[i] = strings.ReplaceAll(strings.ReplaceAll(a, "SESSION", args[0]), "$WORK", ts.Getenv("WORK"))
		}
		err := ts.Exec(argv[0], argv[1:]...)
		stderr := ts.ReadFile("stderr")
		ts.Logf("%s: %v", strings.Join(argv, " "), map[bool]string{true: "ok", false: fmt.Sprint(err)}[err == nil])
		if crashRe.MatchString(stderr) || crashRe.MatchString(ts.ReadFile("stdout")) {
			ts.Fatalf("%s crashed:\n%s", strings.Join(argv, " "), stderr)
		}
	}
}

func cmdIntact(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: intact")
	}
	want, err := os.ReadFile(filepath.Join(ts.Getenv("WORK"), "history"))
	ts.Check(err)
	for _, argv := range [][]string{{"fsck", "--no-dangling", "--no-progress"}, {"log", "--format=%H %s"}} {
		cmd := exec.Command("git", append([]string{"-C", ts.MkAbs(".")}, argv...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		out, err := cmd.CombinedOutput()
		if err != nil {
			ts.Fatalf("the outer folder's history is damaged: git %s: %v\n%s", strings.Join(argv, " "), err, out)
		}
		if argv[0] == "log" && string(out) != string(want) {
			ts.Fatalf("the outer folder's history changed:\n%s\nwant:\n%s", out, want)
		}
	}
}

// cmdNoRaw fails when the last command's stdout or stderr holds a byte or
// character a terminal obeys: a C0 control but tab and newline, DEL, a C1
// control, a bidi override or isolate, or bytes that are not UTF-8.
func cmdNoRaw(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: noraw")
	}
	for _, stream := range []string{"stdout", "stderr"} {
		text := ts.ReadFile(stream)
		if !utf8.ValidString(text) {
			ts.Fatalf("%s holds bytes that are not UTF-8: %q", stream, text)
		}
		for i, r := range text {
			if (r < 0x20 && r != '\t' && r != '\n') || (r >= 0x7F && r <= 0x9F) || (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069) {
				ts.Fatalf("%s holds %U raw at byte %d: %q", stream, r, i, text[max(0, i-40):min(len(text), i+40)])
			}
		}
	}
}
