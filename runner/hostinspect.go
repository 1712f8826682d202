package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// What asb reads of the VM's commits, it reads in the host repository.

// Commit resolves rev (a full ref name or a commit) to a commit of the host
// repository; ok is false when it names none.
func (h *HostRepo) Commit(ctx context.Context, rev string) (commit string, ok bool) {
	if rev == "" || strings.HasPrefix(rev, "-") {
		return "", false
	}
	out, err := h.output(ctx, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(out)), true
}

// CreateRef makes ref point at commit; it fails when ref exists.
func (h *HostRepo) CreateRef(ctx context.Context, ref, commit string) error {
	_, err := h.output(ctx, "update-ref", "-m", "asb session new", ref, commit, strings.Repeat("0", len(commit)))
	return err
}

// DeleteRefs removes refs and every ref under the prefixes (ending in /).
func (h *HostRepo) DeleteRefs(ctx context.Context, refs ...string) error {
	var in bytes.Buffer
	for _, r := range refs {
		if !strings.HasSuffix(r, "/") {
			fmt.Fprintf(&in, "delete %s\n", r)
			continue
		}
		under, err := h.refs(ctx, []string{r})
		if err != nil {
			return err
		}
		for name := range under {
			fmt.Fprintf(&in, "delete %s\n", name)
		}
	}
	if in.Len() == 0 {
		return nil
	}
	cmd := []string{"update-ref", "--stdin"}
	_, err := h.run(ctx, gitRun{stdin: &in}, cmd...)
	return err
}

// AheadBehind counts the commits of tip not on base (ahead) and of base
// not on tip (behind).
func (h *HostRepo) AheadBehind(ctx context.Context, base, tip string) (ahead, behind int, err error) {
	out, err := h.output(ctx, "rev-list", "--left-right", "--count", "--end-of-options", base+"..."+tip)
	if err != nil {
		return 0, 0, err
	}
	f := strings.Fields(string(out))
	if len(f) != 2 {
		return 0, 0, fmt.Errorf("git rev-list --count: %q", out)
	}
	behind, _ = strconv.Atoi(f[0])
	ahead, _ = strconv.Atoi(f[1])
	return ahead, behind, nil
}

// Unmerged counts the commits of ref that no other ref of the host
// repository holds, leaving out the refs matching exclude (globs of full
// names: the source's own).
func (h *HostRepo) Unmerged(ctx context.Context, ref string, exclude ...string) (int, error) {
	args := []string{"rev-list", "--count", ref, "--not"}
	for _, e := range append([]string{ref}, exclude...) {
		args = append(args, "--exclude="+e)
	}
	out, err := h.output(ctx, append(args, "--all")...)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(out)))
}

// LastCommit is the committer time of rev's commit.
func (h *HostRepo) LastCommit(ctx context.Context, rev string) (time.Time, error) {
	out, err := h.output(ctx, "log", "-1", "--no-show-signature", "--format=%cI", "--end-of-options", rev)
	if err != nil {
		return time.Time{}, err
	}
	return time.Parse(time.RFC3339, strings.TrimSpace(string(out)))
}

// Count is the number of commits of tip not on base ("" base: all of tip's).
func (h *HostRepo) Count(ctx context.Context, base, tip string) int {
	args := []string{"rev-list", "--count", "--end-of-options", tip}
	if base != "" {
		args = append(args, "^"+base)
	}
	out, err := h.output(ctx, args...)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	return n
}

// DiffTo writes to w the diff of what tip changed since it left base
// (base...tip): no external diff, no text conversion, no colour.
func (h *HostRepo) DiffTo(ctx context.Context, base, tip string, stat bool, w io.Writer) error {
	args := []string{"diff", "--no-ext-diff", "--no-textconv", "--no-color", "--ignore-submodules=all"}
	if stat {
		args = append(args, "--stat")
	}
	_, err := h.run(ctx, gitRun{stdout: w}, append(args, "--end-of-options", base+"..."+tip, "--")...)
	if err != nil {
		return fmt.Errorf("git diff %s...%s: %w", base, tip, err)
	}
	return nil
}

// ChangedFiles lists the paths tip changed since it left base
// (base...tip), or every path of tip's tree when base is "".
func (h *HostRepo) ChangedFiles(ctx context.Context, base, tip string) ([]string, error) {
	args := []string{"diff", "--no-ext-diff", "--no-textconv", "--name-only", "-z", "--no-renames", "--end-of-options", base + "..." + tip, "--"}
	if base == "" {
		args = []string{"ls-tree", "-r", "-z", "--name-only", "--end-of-options", tip}
	}
	out, err := h.output(ctx, args...)
	if err != nil {
		return nil, err
	}
	var files []string
	for p := range strings.SplitSeq(string(out), "\x00") {
		if p != "" {
			files = append(files, p)
		}
	}
	return files, nil
}

// SetHead points the host repository's HEAD at ref (what a clone of it
// checks out).
func (h *HostRepo) SetHead(ctx context.Context, ref string) error {
	_, err := h.output(ctx, "symbolic-ref", "HEAD", ref)
	return err
}

// Dirty lists what the checkout at dir (a folder the VM writes) changed
// and did not commit, against rev (its HEAD, imported): a temporary index
// of rev's tree in the host repository, and git status with the checkout
// as the work tree. The checkout's files are read as data: its .git is not
// git's repository here, so none of its config, hooks, attributes drivers
// or fsmonitor is in play. Submodules are not entered: git resolves a
// submodule's HEAD through its .git, which the VM points anywhere on the
// host, so each one's entry is marked unchanged before git looks. What
// else git would wait on, follow out of the checkout or read for hours is
// refused first (checkWorkTree: a *WorkTreeError), with nothing writing
// the checkout meanwhile: the caller stops the VM first.
func (h *HostRepo) Dirty(ctx context.Context, dir, rev string) ([]string, error) {
	tree, err := h.treeModes(ctx, rev)
	if err != nil {
		return nil, err
	}
	if err := checkWorkTree(dir, tree); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "asb-index-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	r := gitRun{env: []string{"GIT_INDEX_FILE=" + filepath.Join(tmp, "index")}}
	wt := "--work-tree=" + dir
	var links io.Reader // the submodules, for the step that reads them
	steps := [][]string{{"read-tree", "--end-of-options", rev}}
	if l := tree.gitlinks(); len(l) > 0 {
		links = strings.NewReader(strings.Join(l, "\x00") + "\x00")
		steps = append(steps, []string{"update-index", "--assume-unchanged", "-z", "--stdin"})
	}
	var files []string
	for _, args := range append(steps,
		// The new index knows no file's stat: refresh hashes each one.
		// (update-index applies its options in order.)
		[]string{"update-index", "-q", "--ignore-submodules", "--refresh"},
		[]string{"diff-files", "--name-only", "-z", "--ignore-submodules=all", "--no-ext-diff", "--no-textconv"},
		[]string{"ls-files", "-z", "--others", "--exclude-standard"},
	) {
		r.stdin = nil
		if args[len(args)-1] == "--stdin" {
			r.stdin = links
		}
		out, err := h.run(ctx, r, append([]string{wt, "-c", "core.untrackedCache=false"}, args...)...)
		var te *ToolError
		if err != nil && !(args[0] == "update-index" && errors.As(err, &te) && te.Code == 1) {
			return nil, err // (refresh exits 1 when a file changed)
		}
		for p := range strings.SplitSeq(string(out), "\x00") {
			if p != "" {
				files = append(files, p)
			}
		}
	}
	return files, nil
}
