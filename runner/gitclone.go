package runner

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/agents-sandbox/asb/internal/hostgit"
	"github.com/agents-sandbox/asb/schema"
)

// cloneConfig are the settings of every clone asb runs, beside those of
// every git it runs (hostgit: no ext::, no hooks such as a template's
// post-checkout): no transport that runs a program (any remote
// helper not listed), no submodules fetched behind the user's back, no local
// repository unless the user typed its path, and plain http only when the
// user typed it. They come as -c options, above any config file.
func cloneConfig(local, http bool) []string {
	allow := map[bool]string{true: "always", false: "never"}
	var args []string
	for _, kv := range []string{
		"protocol.allow=never",
		"protocol.https.allow=always",
		"protocol.ssh.allow=always",
		"protocol.git.allow=always",
		"protocol.http.allow=" + allow[http],
		"protocol.file.allow=" + allow[local],
		"submodule.recurse=false",
	} {
		args = append(args, "-c", kv)
	}
	return args
}

// CloneAt clones the origin asb.yaml records into dst: its branch (the
// remote's default when none); at says which commit the clone is at. The
// record is input from whoever can push to the outer folder, so only a
// remote origin is cloned (schema.CheckRecordedOrigin), with the file
// transport off.
func (g Git) CloneAt(ctx context.Context, o schema.WorkspaceOrigin, dst string) (at string, err error) {
	if err := schema.CheckRecordedOrigin(o.URL); err != nil {
		return "", err
	}
	if err := schema.CheckRecordedBranch(o.Branch); err != nil {
		return "", err
	}
	args := append(cloneConfig(false, false), "clone", "--quiet", "--no-recurse-submodules")
	if o.Branch != "" {
		args = append(args, "--branch="+o.Branch)
	}
	if _, err := g.run(ctx, gitRun{dir: filepath.Dir(dst), config: hostgit.UserConfig}, append(args, "--", o.URL, dst)...); err != nil {
		return "", fmt.Errorf("clone %s: %w", o.URL, err)
	}
	head, _ := g.output(ctx, dst, "rev-parse", "HEAD")
	return strings.TrimSpace(string(head)), nil
}

// CloneTyped clones src, which the user typed (asb init --workspace), into
// dst: a URL (with the user's own git config: their credentials reach
// their remote), or a local path (the file transport is then on, through
// git's protected --no-local clone, which copies no file of src's .git but
// objects and refs).
func (g Git) CloneTyped(ctx context.Context, src, dst string) error {
	kind, err := schema.CheckTypedOrigin(src)
	if err != nil {
		return err
	}
	args := append(cloneConfig(kind == schema.OriginLocal, kind == schema.OriginRemote), "clone", "--quiet", "--no-recurse-submodules")
	r := gitRun{dir: filepath.Dir(dst), config: hostgit.UserConfig}
	if kind == schema.OriginLocal {
		args, r.config = append(args, "--no-local"), hostgit.AsbOnly
	}
	if _, err := g.run(ctx, r, append(args, "--", src, dst)...); err != nil {
		return fmt.Errorf("clone %s: %w", src, err)
	}
	return nil
}
