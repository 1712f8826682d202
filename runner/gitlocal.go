package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/agents-sandbox/asb/schema"
)

// A folder the user typed (asb init --workspace PATH) is the user's own:
// trusted, because they typed it. asb reads its remote, and clones it into
// workspace/ so that the VM writes a copy, never the user's checkout: with
// --no-local (git's own transport, not a copy of .git: no hard link, no
// alternates to the user's object store, nothing of its hooks or config),
// no hooks run, and origin then names the remote teammates clone, never the
// local path. Once the VM has run, the clone is VM territory.

// LocalSource is what asb reads of a folder the user typed.
type LocalSource struct {
	Repo   bool   // the folder is the top of a git checkout
	Remote string // the remote whose URL is recorded ("" none)
	URL    string // its URL, when teammates can clone it (https, ssh, git://)
	// LocalURL is set when the remote itself is a path or file:// URL of
	// this machine: the checkout is then local, not shared.
	LocalURL bool
	Branch   string // checked out ("" detached)
	Commit   string // HEAD ("" no commit yet)
}

// ErrNoRemote is a remote the user named that the checkout lacks.
var ErrNoRemote = errors.New("no such remote")

// ReadLocal reads the folder dir the user typed: whether it is the top of a
// git checkout and, if so, remote's URL (remote "" means origin, and no
// origin is no remote; a named remote must exist), branch and commit. A
// remote asb would refuse to record (a password in it, a remote helper) is
// an error that says why.
func (g Git) ReadLocal(ctx context.Context, dir, remote string) (LocalSource, error) {
	var s LocalSource
	if !IsRepoRoot(dir) {
		return s, nil
	}
	s.Repo = true
	name := remote
	if name == "" {
		name = "origin"
	}
	if b, err := g.output(ctx, dir, "symbolic-ref", "--quiet", "--short", "HEAD"); err == nil {
		s.Branch = strings.TrimSpace(string(b))
	}
	if c, err := g.output(ctx, dir, "rev-parse", "--verify", "--quiet", "HEAD"); err == nil {
		s.Commit = strings.TrimSpace(string(c))
	}
	url, err := g.output(ctx, dir, "config", "--get", "remote."+name+".url")
	if err != nil || strings.TrimSpace(string(url)) == "" {
		if remote != "" {
			return s, fmt.Errorf("--workspace-remote %s: %s has %w (git -C %s remote -v lists them)", remote, dir, ErrNoRemote, dir)
		}
		return s, nil
	}
	s.Remote = name
	raw := strings.TrimSpace(string(url))
	kind, err := schema.CheckTypedOrigin(raw)
	if err != nil {
		return s, fmt.Errorf("the remote %s of %s: %w", name, dir, err)
	}
	if kind == schema.OriginLocal || schema.CheckRecordedOrigin(raw) != nil {
		s.LocalURL = true // a path of this machine, or plain http: nothing a teammate's sync clones
		return s, nil
	}
	s.URL = raw
	return s, nil
}

// CloneLocal clones the user's checkout src into dst (its checked-out
// branch) without hard links, alternates or hooks, then makes origin the
// URL teammates clone (url), or removes origin ("" : no shareable remote),
// so that the local path is never an origin.
func (g Git) CloneLocal(ctx context.Context, src, dst, url string) error {
	args := append(cloneConfig(true, false), "clone", "--quiet", "--no-local", "--no-recurse-submodules", "--", src, dst)
	if _, err := g.output(ctx, filepath.Dir(dst), args...); err != nil {
		return fmt.Errorf("clone %s: %w", src, err)
	}
	set := []string{"remote", "remove", "origin"}
	if url != "" {
		set = []string{"remote", "set-url", "origin", url}
	}
	if _, err := g.output(ctx, dst, set...); err != nil {
		return fmt.Errorf("point the clone's origin at %s: %w", cmp.Or(url, "no remote"), err)
	}
	return nil
}
