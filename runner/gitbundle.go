package runner

import (
	"context"
	"fmt"
)

// Bundle writes every ref of repo, a clone asb made itself (CloneAt), into
// the git bundle file: the workspace as asb kube agent delivers it into a
// pod that reaches no git host.
func (g Git) Bundle(ctx context.Context, repo, file string) error {
	if _, err := g.output(ctx, repo, "bundle", "create", "--quiet", file, "--all"); err != nil {
		return fmt.Errorf("git bundle of %s: %w", repo, err)
	}
	return nil
}
