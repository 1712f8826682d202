package runner

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/agents-sandbox/asb/internal/folderfs"
)

// Source is a repository the VM can write, as the host repository imports
// it: its checkout (relative to the outer folder), its name (its staged
// copy's folder), how messages call it, and where its refs go.
type Source struct {
	Name     string // workspace, session-NAME
	Checkout string // workspace, .asb/sessions/NAME/workspace
	Label    string // workspace/.git
	// Refspecs are fetched when their source ref exists in the checkout's
	// repository ("+SRC:DST", SRC a full ref name or a glob); HeadRef, when
	// set, gets the commit of its HEAD.
	Refspecs []string
	HeadRef  string
}

// WorkspaceSource is workspace/'s repository: its branches under
// refs/heads/workspace/, its tags and HEAD where only asb reads them.
func WorkspaceSource() Source {
	return Source{Name: "workspace", Checkout: "workspace", Label: "workspace/.git",
		Refspecs: []string{"+refs/heads/*:" + WorkspaceBranches + "*", "+refs/tags/*:" + WorkspaceTags + "*"},
		HeadRef:  WorkspaceHeadRef}
}

// RefUpdate is a ref of the host repository an import changed: Old is ""
// for a new ref, New "" for one removed.
type RefUpdate struct {
	Ref string `json:"ref"`
	Old string `json:"old,omitempty"`
	New string `json:"new,omitempty"`
}

// Imported is what an import found and did.
type Imported struct {
	Head    Head        // the checkout's HEAD (HeadErr: unreadable)
	HeadErr error       `json:"-"`
	Missing []string    // source refs of Refspecs the checkout does not have
	Updated []RefUpdate // refs of the host repository that changed
}

// Import brings src's commits into the host repository: src's .git is
// checked (OpenGitDir), staged through an os.Root of it, and fetched from
// the staged copy with every object checked, no tags followed and src's
// refs mapped into their namespace (pruned there). Nothing of src's config,
// hooks or worktree is read by any git.
func (h *HostRepo) Import(ctx context.Context, src Source) (*Imported, error) {
	lock, err := AcquireFolderLock(ctx, h.outer, hostRepoLock, Holder("asb: fetching "+src.Label, time.Now()), nil)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	stagedDir, st, err := h.stage(ctx, src)
	if err != nil {
		return nil, err
	}
	imp := &Imported{Head: st.head, HeadErr: st.headErr}
	specs, prefixes := h.specsFor(src, st, imp)
	if len(specs) == 0 {
		return imp, nil
	}
	before, err := h.refs(ctx, prefixes)
	if err != nil {
		return nil, err
	}
	args := []string{"-c", "protocol.allow=never", "-c", "protocol.file.allow=always", "-c", "fetch.fsckObjects=true", "-c", "transfer.fsckObjects=true",
		"fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", "--update-shallow", "--prune",
		"--", stagedDir}
	if _, err := h.output(ctx, append(args, specs...)...); err != nil {
		return nil, fmt.Errorf("fetch %s into %s: %w", src.Label, HostRepoDir, err)
	}
	after, err := h.refs(ctx, prefixes)
	if err != nil {
		return nil, err
	}
	imp.Updated = diffRefs(before, after)
	return imp, nil
}

// stage checks src's shape and copies what a fetch needs of it into its
// staged copy, whose path it returns; a ref whose object the copy lacks is
// refused.
func (h *HostRepo) stage(ctx context.Context, src Source) (string, *staged, error) {
	gitDir, err := OpenGitDir(filepath.Join(h.outer, filepath.FromSlash(src.Checkout)), src.Label)
	if err != nil {
		return "", nil, err
	}
	defer gitDir.Close()
	root, err := folderfs.Open(h.outer)
	if err != nil {
		return "", nil, err
	}
	defer root.Close()
	stageRel := importDir + "/" + src.Name + ".git"
	if err := root.MkdirAll(stageRel, 0o755); err != nil {
		return "", nil, folderfs.Explain(stageRel, err)
	}
	dst, err := root.OpenRoot(stageRel)
	if err != nil {
		return "", nil, folderfs.Explain(stageRel, err)
	}
	st, err := stage(gitDir, dst)
	dst.Close()
	if err != nil {
		return "", nil, fmt.Errorf("read %s: %w", src.Label, err)
	}
	stagedDir := filepath.Join(h.outer, filepath.FromSlash(stageRel))
	return stagedDir, st, h.checkObjects(ctx, stagedDir, st, src.Label)
}

// checkObjects refuses a staged copy with a ref whose object it lacks:
// one reached only through alternates or a link (which are not copied), or
// a damaged repository. The fetch would fail on it anyway, saying less.
func (h *HostRepo) checkObjects(ctx context.Context, staged string, st *staged, label string) error {
	byHash := map[string][]string{}
	for name, hash := range st.refs {
		byHash[hash] = append(byHash[hash], name)
	}
	if st.head.Commit != "" {
		byHash[st.head.Commit] = append(byHash[st.head.Commit], "HEAD")
	}
	if len(byHash) == 0 {
		return nil
	}
	var in strings.Builder
	for hash := range byHash {
		in.WriteString(hash + "\n")
	}
	out, err := h.git.run(ctx, gitRun{dir: staged, stdin: strings.NewReader(in.String())}, "--git-dir="+staged, "cat-file", "--batch-check=%(objectname)")
	if err != nil {
		return fmt.Errorf("read %s: %w", label, err)
	}
	var missing []string
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		if hash, ok := strings.CutSuffix(line, " missing"); ok {
			missing = append(missing, byHash[hash]...)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return &ShapeError{Repo: label, Found: fmt.Sprintf("%s names an object the repository does not hold (one reached through alternates or a link is not read)", strings.Join(missing, ", "))}
	}
	return nil
}

// specsFor are the refspecs of src whose source the staged copy has (the
// others are noted as missing), and the host refs they may change.
func (h *HostRepo) specsFor(src Source, st *staged, imp *Imported) (specs, prefixes []string) {
	for _, spec := range src.Refspecs {
		from, to, _ := strings.Cut(strings.TrimPrefix(spec, "+"), ":")
		if !strings.Contains(from, "*") && !st.has(from) {
			imp.Missing = append(imp.Missing, from)
			continue
		}
		specs = append(specs, spec) // a glob matching nothing prunes what it matched before

		prefixes = append(prefixes, strings.TrimSuffix(to, "*"))
	}
	if src.HeadRef != "" && st.has("HEAD") {
		specs = append(specs, "+HEAD:"+src.HeadRef)
		prefixes = append(prefixes, src.HeadRef)
	}
	return specs, prefixes
}

// refs lists the host repository's refs under prefixes: name → commit.
func (h *HostRepo) refs(ctx context.Context, prefixes []string) (map[string]string, error) {
	out, err := h.output(ctx, append([]string{"for-each-ref", "--format=%(objectname) %(refname)"}, prefixes...)...)
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		if hash, name, ok := strings.Cut(line, " "); ok {
			m[name] = hash
		}
	}
	return m, nil
}

// diffRefs lists the refs that differ between before and after, by name.
func diffRefs(before, after map[string]string) []RefUpdate {
	var out []RefUpdate
	for name, n := range after {
		if before[name] != n {
			out = append(out, RefUpdate{Ref: name, Old: before[name], New: n})
		}
	}
	for name, o := range before {
		if _, ok := after[name]; !ok {
			out = append(out, RefUpdate{Ref: name, Old: o})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Ref < out[j].Ref })
	return out
}

// Forget removes src's staged copy and the refs (full names, or prefixes
// ending in /) it had in the host repository.
func (h *HostRepo) Forget(ctx context.Context, src Source, refs ...string) error {
	root, err := folderfs.Open(h.outer)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := root.RemoveAll(importDir + "/" + src.Name + ".git"); err != nil {
		return err
	}
	return h.DeleteRefs(ctx, refs...)
}
