package runner

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/agents-sandbox/asb/schema"
)

// cloneConfig are the settings of every clone asb runs: no transport that
// runs a program (ext::, and any remote helper not listed), no hooks (a
// template's post-checkout), no submodules fetched behind the user's back,
// no local repository unless the user typed its path, and plain http
// only when the user typed it. They come as -c
// options, above any config file.
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
		"protocol.ext.allow=never",
		"core.hooksPath=/dev/null",
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
	if _, err := Output(ctx, filepath.Dir(dst), g.bin(), append(args, "--", o.URL, dst)...); err != nil {
		return "", fmt.Errorf("clone %s: %w", o.URL, err)
	}
	head, _ := Output(ctx, dst, g.bin(), append(cloneConfig(false, false), "rev-parse", "HEAD")...)
	return strings.TrimSpace(string(head)), nil
}

// CloneTyped clones src, which the user typed (asb init --workspace), into
// dst: a URL, or a local path (the file transport is then on).
func (g Git) CloneTyped(ctx context.Context, src, dst string) error {
	kind, err := schema.CheckTypedOrigin(src)
	if err != nil {
		return err
	}
	args := append(cloneConfig(kind == schema.OriginLocal, kind == schema.OriginRemote), "clone", "--quiet", "--no-recurse-submodules", "--", src, dst)
	if _, err := Output(ctx, filepath.Dir(dst), g.bin(), args...); err != nil {
		return fmt.Errorf("clone %s: %w", src, err)
	}
	return nil
}
