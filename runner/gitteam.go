package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

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
	out, err := g.run(ctx, inTemp(dir), "merge-file", "-p",
		"-L", labels[0], "-L", labels[1], "-L", labels[2], paths[0], paths[1], paths[2])
	var te *ToolError
	switch {
	case err == nil:
		return out, 0, nil
	case errors.As(err, &te) && te.Code > 0 && te.Code < 128:
		return out, te.Code, nil // the count of conflicts
	}
	return nil, 0, err
}

// inTemp runs git in the temporary folder dir, which holds no repository:
// git looks for none above it either (GIT_CEILING_DIRECTORIES), so no
// repository around the temporary folder lends its config.
func inTemp(dir string) gitRun {
	return gitRun{dir: dir, env: []string{"GIT_CEILING_DIRECTORIES=" + filepath.Dir(dir)}}
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
	out, err := g.run(ctx, inTemp(dir), "diff", "--no-index", "--no-ext-diff", "--no-textconv", "--no-color", "--src-prefix=", "--dst-prefix=", "--", "a", "b")
	var te *ToolError
	if err != nil && !(errors.As(err, &te) && te.Code == 1) {
		return "", fmt.Errorf("git diff: %w", err)
	}
	// Name the file, not the temp copies.
	text := string(out)
	for _, r := range [][2]string{{"diff --git a b", "diff --git a/" + path + " b/" + path}, {"--- a\n", "--- a/" + path + "\n"}, {"+++ b\n", "+++ b/" + path + "\n"}} {
		text = strings.Replace(text, r[0], r[1], 1)
	}
	return text, nil
}
