package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agents-sandbox/asb/schema"
)

// Git is the git CLI.
type Git struct {
	Bin string // "git" unless set
}

func (g Git) bin() string {
	if g.Bin == "" {
		return "git"
	}
	return g.Bin
}

// output runs git with args in dir, with the options and environment that
// keep a repository's own config from running programs (schema.GitArgs).
func (g Git) output(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return OutputEnv(ctx, dir, schema.GitEnv, g.bin(), schema.GitArgs(args...)...)
}

// Init makes dir a new repository (no commit).
func (g Git) Init(ctx context.Context, dir string) error {
	if _, err := g.output(ctx, dir, "init", "--quiet"); err != nil {
		return fmt.Errorf("git init %s: %w", dir, err)
	}
	return nil
}

// IsRepoRoot reports whether dir itself holds a repository (.git).
func IsRepoRoot(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, ".git"))
	return err == nil
}

// IsRepo reports whether dir is the top of a working git repository: a
// .git that git itself can use (a git init that was killed leaves one it
// cannot, which a new git init completes).
func (g Git) IsRepo(ctx context.Context, dir string) bool {
	if !IsRepoRoot(dir) {
		return false
	}
	out, err := g.output(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return false
	}
	top := strings.TrimSpace(string(out))
	a, errA := filepath.EvalSymlinks(top)
	b, errB := filepath.EvalSymlinks(dir)
	return errA == nil && errB == nil && a == b
}

// NoHistory reports whether the .git in dir holds nothing a user made: no
// object, ref, packed ref or index, as a git init that was killed leaves it
// (its lock files then block every later git init).
func NoHistory(dir string) bool {
	gitDir := filepath.Join(dir, ".git")
	for _, f := range []string{"packed-refs", "index"} {
		if _, err := os.Lstat(filepath.Join(gitDir, f)); err == nil {
			return false
		}
	}
	for _, sub := range []string{"objects", "refs"} {
		found := false
		_ = filepath.WalkDir(filepath.Join(gitDir, sub), func(_ string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				found = true
				return filepath.SkipAll
			}
			return nil
		})
		if found {
			return false
		}
	}
	return true
}

// TrackedFiles lists the files of HEAD's tree at the top level of the
// repository at dir (nil when it has no commit).
func (g Git) TrackedFiles(ctx context.Context, dir string) []string {
	if !IsRepoRoot(dir) {
		return nil // no repository, no history (and no git process to start)
	}
	out, err := g.output(ctx, dir, "ls-tree", "--name-only", "HEAD")
	if err != nil {
		return nil
	}
	return strings.Fields(string(out))
}
