package schema

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"

	"github.com/agents-sandbox/asb/internal/hostgit"
)

func (c *checker) checkSecretsEnv() {
	c.envFile = map[string]bool{}
	data, ok, err := c.read(SecretsEnvFile)
	if err != nil {
		c.add(Problem{File: SecretsEnvFile, Severity: SeverityError, Msg: "cannot read the file: " + errText(err), Fix: "chmod 600 secrets.env; it must be readable by you"})
	}
	if ok {
		c.parseEnv(data)
		if fi, err := os.Stat(filepath.Join(c.dir, SecretsEnvFile)); err == nil && fi.Mode().Perm()&0o077 != 0 {
			c.add(Problem{File: SecretsEnvFile, Severity: SeverityError,
				Msg: fmt.Sprintf("secrets.env is readable by others (mode %04o)", fi.Mode().Perm()), Fix: "chmod 600 secrets.env"})
		}
	}
	_, hasSecrets, _ := c.read(SecretsFile)
	if !ok && !hasSecrets {
		return
	}
	c.checkIgnored()
	if ok {
		if p := c.trackedEnv(); p != nil {
			c.add(*p)
		}
	}
}

// trackedEnv is the problem of a secrets.env that git tracks: its values
// are in the repository, and a clone brings whoever pushed it's values.
func (c *checker) trackedEnv() *Problem {
	tracked, err := c.tracked(SecretsEnvFile)
	if err != nil || !tracked {
		return nil
	}
	return &Problem{File: SecretsEnvFile, Severity: SeverityError,
		Msg: "secrets.env is tracked by git: its values are in the repository",
		Fix: "git rm --cached secrets.env, commit, and rotate every credential it ever held"}
}

// SecretsEnvTracked refuses the outer folder dir's secrets.env when git
// tracks it (validate's rule): what msb would get then is the repository's,
// from whoever pushed it, not this user's.
func SecretsEnvTracked(ctx context.Context, dir string) error {
	if _, err := os.Lstat(filepath.Join(dir, SecretsEnvFile)); err != nil {
		return nil //nolint:nilerr // no secrets.env: nothing of it is used
	}
	c := newChecker(dir, CheckOptions{Context: ctx})
	if p := c.trackedEnv(); p != nil {
		return fmt.Errorf("refused: %s (%s)", p.Msg, p.Fix)
	}
	return nil
}

// parseEnv notes which names secrets.env sets (the values are dropped).
func (c *checker) parseEnv(data []byte) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for line := 1; sc.Scan(); line++ {
		t := strings.TrimSpace(sc.Text())
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		t = strings.TrimPrefix(t, "export ")
		name, val, ok := strings.Cut(t, "=")
		name = strings.TrimSpace(name)
		if !ok || !ValidEnvName(name) {
			// Never echo the line: it may hold a credential.
			c.add(Problem{File: SecretsEnvFile, Line: line, Col: 1, Severity: SeverityError,
				Msg: "this line is not NAME=VALUE; go-task cannot load the file", Fix: "write NAME=VALUE, or start the line with # to comment it out"})
			continue
		}
		val = strings.TrimSpace(val)
		if i := strings.Index(val, " #"); i >= 0 && !strings.HasPrefix(val, `"`) && !strings.HasPrefix(val, "'") {
			val = strings.TrimSpace(val[:i])
		}
		val = strings.Trim(val, `"'`)
		c.envFile[name] = val != ""
	}
}

func (c *checker) git(args ...string) (int, error) {
	// The outer folder's own repository (never one the VM writes), with
	// the one environment and options of every git asb runs.
	err := hostgit.Command(c.ctx, "", c.dir, hostgit.AsbOnly, args...).Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), nil
	}
	if err != nil {
		return -1, err
	}
	return 0, nil
}

// inRepo reports whether the outer folder may be in a git work tree. Where
// no .git could be found (a folder made with --no-git) no git starts; where
// one could, the git commands below answer for themselves: outside a work
// tree they fail (exit 128), which counts as "not tracked" and "ask the
// .gitignore". (An edit checks the folder twice; each git is a process.)
func (c *checker) inRepo() bool {
	return hostgit.MayBeInWorkTree(c.dir)
}

func (c *checker) tracked(rel string) (bool, error) {
	if c.opts.Tracked != nil {
		return c.opts.Tracked(rel)
	}
	if !c.inRepo() {
		return false, nil
	}
	code, err := c.git("ls-files", "--error-unmatch", "--", rel)
	return err == nil && code == 0, err
}

func (c *checker) checkIgnored() {
	gi, _, _ := c.read(GitignoreFile)
	_, overridden := c.opts.Overrides[GitignoreFile]
	ignored := gitignoreMatches(gi, SecretsEnvFile)
	how := "the .gitignore of the outer folder does not ignore it"
	if c.opts.Tracked == nil && !overridden && c.inRepo() {
		code, err := c.git("check-ignore", "-q", "--no-index", "--", SecretsEnvFile)
		if err == nil && (code == 0 || code == 1) {
			ignored = code == 0
			how = "git check-ignore says it is not ignored"
		}
	}
	if !ignored {
		c.add(Problem{File: GitignoreFile, Severity: SeverityError,
			Msg: "secrets.env is not git-ignored (" + how + "): a commit could publish the credentials",
			Fix: "add the line /secrets.env to .gitignore"})
	}
}

// gitignoreMatches reports whether the .gitignore content ignores the file
// rel (a path at the root of the folder). It handles the common forms:
// comments, negation, anchored and unanchored globs, **/ and trailing /.
func gitignoreMatches(content []byte, rel string) bool {
	ignored := false
	for line := range strings.SplitSeq(string(content), "\n") {
		p := strings.TrimRight(line, " \r")
		if p == "" || strings.HasPrefix(p, "#") {
			continue
		}
		neg := strings.HasPrefix(p, "!")
		p = strings.TrimPrefix(p, "!")
		p = strings.TrimPrefix(p, `\`)
		if strings.HasSuffix(p, "/") {
			continue // a folder pattern never matches a file at the root
		}
		p = strings.TrimPrefix(p, "**/")
		anchored := strings.Contains(strings.TrimPrefix(p, "/"), "/") || strings.HasPrefix(p, "/")
		p = strings.TrimPrefix(p, "/")
		var ok bool
		if anchored {
			ok, _ = path.Match(p, rel)
		} else {
			ok, _ = path.Match(p, path.Base(rel))
		}
		if ok {
			ignored = !neg
		}
	}
	return ignored
}
