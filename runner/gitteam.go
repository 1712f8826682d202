package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/agents-sandbox/asb/schema"
)

// Origin returns where the repository at dir comes from: its origin
// remote's URL, the branch checked out and the commit. ok is false when dir
// is not the top of a repository or has no origin remote.
func (g Git) Origin(ctx context.Context, dir string) (o schema.WorkspaceOrigin, ok bool) {
	if !IsRepoRoot(dir) {
		return o, false
	}
	url, err := g.output(ctx, dir, "config", "--get", "remote.origin.url")
	if err != nil || len(bytes.TrimSpace(url)) == 0 {
		return o, false
	}
	o.URL = strings.TrimSpace(string(url))
	if b, err := g.output(ctx, dir, "symbolic-ref", "--quiet", "--short", "HEAD"); err == nil {
		o.Branch = strings.TrimSpace(string(b))
	}
	if c, err := g.output(ctx, dir, "rev-parse", "--verify", "--quiet", "HEAD"); err == nil {
		o.Commit = strings.TrimSpace(string(c))
	}
	return o, true
}

// MergeFile merges three versions of a file as `git merge-file` does:
// ours (the user's), base (what asb wrote), theirs (the new render). It
// returns the merged bytes and the number of conflicts (left as standard
// markers in the result).
func (g Git) MergeFile(ctx context.Context, ours, base, theirs []byte, labels [3]string) ([]byte, int, error) {
	dir, err := os.MkdirTemp("", "asb-merge-")
	if err != nil {
		return nil, 0, err
	}
	defer os.RemoveAll(dir)
	paths := [3]string{filepath.Join(dir, "ours"), filepath.Join(dir, "base"), filepath.Join(dir, "theirs")}
	for i, b := range [][]byte{ours, base, theirs} {
		if err := os.WriteFile(paths[i], b, 0o600); err != nil {
			return nil, 0, err
		}
	}
	cmd := exec.CommandContext(ctx, g.bin(), schema.GitArgs("merge-file", "-p",
		"-L", labels[0], "-L", labels[1], "-L", labels[2], paths[0], paths[1], paths[2])...)
	cmd.Env = append(os.Environ(), schema.GitEnv...)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out.Bytes(), 0, nil
	case errors.As(err, &ee) && ee.ExitCode() > 0 && ee.ExitCode() < 128:
		return out.Bytes(), ee.ExitCode(), nil // the count of conflicts
	}
	return nil, 0, &ToolError{Cmd: []string{"git", "merge-file"}, Output: stderr.String(), Err: err}
}

// Diff is a unified diff of a and b (`git diff --no-index`), labelled with
// path; "" when they are equal.
func (g Git) Diff(ctx context.Context, path string, a, b []byte) (string, error) {
	dir, err := os.MkdirTemp("", "asb-diff-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	pa, pb := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := os.WriteFile(pa, a, 0o600); err != nil {
		return "", err
	}
	if err := os.WriteFile(pb, b, 0o600); err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, g.bin(), schema.GitArgs("diff", "--no-index", "--no-ext-diff", "--no-color", "--src-prefix=", "--dst-prefix=", "--", "a", "b")...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), schema.GitEnv...)
	out, err := cmd.Output()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		return "", fmt.Errorf("git diff: %w", err)
	}
	// Name the file, not the temp copies.
	text := string(out)
	for _, r := range [][2]string{{"diff --git a b", "diff --git a/" + path + " b/" + path}, {"--- a\n", "--- a/" + path + "\n"}, {"+++ b\n", "+++ b/" + path + "\n"}} {
		text = strings.Replace(text, r[0], r[1], 1)
	}
	return text, nil
}
