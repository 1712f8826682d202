package outer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/agents-sandbox/asb/internal/folderfs"
	"github.com/agents-sandbox/asb/runner"
	"github.com/agents-sandbox/asb/schema"
)

// Trust: a cloned outer folder is input from whoever can push to its
// repository. What asb runs or hands to msb from it — the Taskfile, the
// VM's and the secrets' configs, the image's build context, the workspace's
// origin — runs only once this user has approved that content (as direnv's
// allow and mise's trust do), or when it is exactly what asb itself renders
// from the folder's recorded answers. Approvals live in the user's state
// folder (approvals.go), never in the repository, so a commit cannot
// approve itself.

// TrustSet is the content of an outer folder that asb runs or hands on.
type TrustSet struct {
	Files  map[string][]byte // relative path → content
	Origin string            // the workspace's recorded origin: URL and branch
}

// toolchainDir is the image's build context.
const toolchainDir = "toolchain"

// untrusted are the top-level files outside the trust set: the user's own
// values, text nobody runs, and the record (its answers are what the render
// is made from, and its origin is in the set on its own).
var untrusted = []string{SecretsEnvFile, "README.md", ".gitignore", schema.RecordFile}

// ReadTrustSet reads the trust set of dir: every plain file at the top of
// the folder but the untrusted ones, every file under toolchain/ but the
// host's CA copies asb writes there, every Taskfile the Taskfile includes
// (trust_includes.go), and the workspace origin in asb.yaml. A link among them,
// or a special file, is an error: asb would not know what it runs.
func ReadTrustSet(dir string) (*TrustSet, error) {
	root, err := folderfs.Open(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	s := &TrustSet{Files: map[string][]byte{}}
	entries, err := fs.ReadDir(root.FS(), ".")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		name := e.Name()
		switch {
		case name == toolchainDir:
			if err := s.readTree(root, toolchainDir); err != nil {
				return nil, err
			}
		case e.IsDir() || !inTrustSet(name):
		case e.Type()&fs.ModeSymlink != 0:
			if err := s.readLink(root, name); err != nil {
				return nil, err
			}
		default:
			if err := s.readFile(root, name, e); err != nil {
				return nil, err
			}
		}
	}
	if err := s.readIncludes(root, runner.TaskfileName, map[string]bool{}); err != nil {
		return nil, err
	}
	if rec, err := schema.ReadRecord(dir); err == nil {
		s.Origin = origin(rec.Workspace)
	}
	return s, nil
}

// inTrustSet says whether the file rel of an outer folder is in its trust
// set: a top-level file but the untrusted ones, or one under toolchain/
// but the host's CA copies asb writes there.
func inTrustSet(rel string) bool {
	if strings.HasPrefix(rel, toolchainDir+"/") {
		return !strings.HasPrefix(rel, CertsDir+"/"+HostCertPrefix)
	}
	return !strings.Contains(rel, "/") && !slices.Contains(untrusted, rel)
}

func (s *TrustSet) readTree(root *folderfs.Root, top string) error {
	return fs.WalkDir(root.FS(), top, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !inTrustSet(p) {
			return err
		}
		return s.readFile(root, p, d)
	})
}

// readLink adds a top-level link to the set by its target: a link to a
// folder inside the outer folder (a bind's source, say), which the mount
// rules judge where they meet it. A link to a file, or out of the folder,
// is refused: what asb, go-task or msb would read through it is not in
// the set, and could change after an approval.
func (s *TrustSet) readLink(root *folderfs.Root, rel string) error {
	target, err := root.Readlink(rel)
	if err != nil {
		return folderfs.Explain(rel, err)
	}
	if fi, err := root.Stat(rel); err != nil || !fi.IsDir() {
		return fmt.Errorf("%s is a link (to %s) that leads to a file, out of the outer folder or nowhere: asb runs no folder whose files it cannot read as they are; replace it with the file, or write the folder's own path in sandbox.yaml (with # %s) instead of a link", rel, target, schema.HostConsent)
	}
	s.Files[rel] = fmt.Appendf(nil, "(a link to the folder %s)\n", target)
	return nil
}

// readFile adds rel to the set: its content, or, for a file larger than
// asb reads whole (a binary in the image's build context), a line with its
// size and digest, which the hash and the diff use alike.
func (s *TrustSet) readFile(root *folderfs.Root, rel string, d fs.DirEntry) error {
	if !d.Type().IsRegular() {
		return fmt.Errorf("%s is not a plain file (a link or a device): asb runs no folder whose Taskfile, configs or image it cannot read as they are; replace it with a file", rel)
	}
	f, err := root.OpenFile(rel, os.O_RDONLY, 0)
	if err != nil {
		return folderfs.Explain(rel, err)
	}
	defer f.Close()
	head, err := io.ReadAll(io.LimitReader(f, schema.MaxFileSize+1))
	if err != nil {
		return err
	}
	if len(head) <= schema.MaxFileSize {
		s.Files[rel] = head
		return nil
	}
	h := sha256.New()
	h.Write(head)
	n, err := io.Copy(h, f)
	if err != nil {
		return err
	}
	s.Files[rel] = fmt.Appendf(nil, "(a file of %d bytes, sha256 %x)\n", int64(len(head))+n, h.Sum(nil))
	return nil
}

// Hash is the digest an approval is keyed by.
func (s *TrustSet) Hash() string {
	h := sha256.New()
	for _, name := range s.names() {
		fmt.Fprintf(h, "%d:%s\n%d:", len(name), name, len(s.Files[name]))
		h.Write(s.Files[name])
	}
	fmt.Fprintf(h, "origin:%s", s.Origin)
	return hex.EncodeToString(h.Sum(nil))
}

// namesWith lists, sorted, the files of s and of o.
func (s *TrustSet) namesWith(o *TrustSet) []string {
	names := s.names()
	for _, n := range o.names() {
		if _, ok := s.Files[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

func (s *TrustSet) names() []string {
	names := make([]string, 0, len(s.Files))
	for n := range s.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// consentMark starts the comments by which a folder widens its boundary
// (# asb: allow-home): never trusted without the user's own approval.
const consentMark = "asb: allow"

// RenderTrustSet is the trust set asb renders from dir's recorded answers
// (asb.yaml) with the templates of tree.
func RenderTrustSet(dir string, tree fs.FS) (*TrustSet, error) {
	plan, rec, err := renderRecord(dir, tree, "", nil)
	if err != nil {
		return nil, err
	}
	s := &TrustSet{Files: map[string][]byte{}, Origin: origin(rec.Workspace)}
	for _, f := range plan.Files {
		if !f.Dir && inTrustSet(f.Path) {
			s.Files[f.Path] = f.Content
		}
	}
	return s, nil
}

// origin is how the trust set names a workspace origin.
func origin(o schema.WorkspaceOrigin) string { return strings.TrimSpace(o.URL + " " + o.Branch) }

// Same reports whether s and o hold the same content.
func (s *TrustSet) Same(o *TrustSet) bool { return o != nil && s.Hash() == o.Hash() }

// widens reports whether the set carries a consent comment.
func (s *TrustSet) widens() bool {
	for _, b := range s.Files {
		if bytes.Contains(b, []byte(consentMark)) {
			return true
		}
	}
	return false
}

// Verdict is whether an outer folder may run, and why.
type Verdict struct {
	Trusted bool
	Why     string     // "approved by you", "asb's own render of asb.yaml", or what is wrong
	Set     *TrustSet  // the folder's
	Render  *TrustSet  // asb's render, when it could be made
	Store   *Approvals // where approvals are kept
}

// CheckTrust judges the outer folder dir: approved by this user for this
// content, or identical to asb's render of its answers (and widening
// nothing), or neither.
func CheckTrust(dir string, tree fs.FS, getenv func(string) string) (*Verdict, error) {
	set, err := ReadTrustSet(dir)
	if err != nil {
		return nil, err
	}
	store, serr := ApprovalStore(getenv)
	v := &Verdict{Set: set, Store: store}
	if serr == nil && store.Approved(dir, set.Hash()) {
		v.Trusted, v.Why = true, "approved by you (asb trust)"
		return v, nil
	}
	render, rerr := RenderTrustSet(dir, tree)
	v.Render = render
	switch {
	case rerr != nil:
		v.Why = "asb cannot render it from its record: " + rerr.Error()
	case set.Same(render) && !set.widens():
		v.Trusted, v.Why = true, "asb's own render of "+schema.RecordFile
		if serr == nil {
			_ = store.Approve(dir, set.Hash()) // the next check is one stat
		}
	case renderedBefore(dir, set, render):
		v.Why = "it is what an earlier asb rendered from " + schema.RecordFile + ", and this asb renders it differently (its templates changed; the files that differ are as .asb-base/ records them): asb update brings the folder to this asb's render, or approve it as it is"
	default:
		v.Why = "it differs from what asb renders from " + schema.RecordFile + ", and you have not approved this content"
	}
	if !v.Trusted && serr != nil {
		return nil, serr
	}
	return v, nil
}

// PrintDiff writes, file by file, how the folder differs from asb's render
// (all of the folder's content, when there is no render).
func (v *Verdict) PrintDiff(ctx context.Context, w io.Writer, git runner.Git) error {
	render := v.Render
	if render == nil {
		render = &TrustSet{Files: map[string][]byte{}}
	}
	for _, n := range v.Set.namesWith(render) {
		ours, theirs := v.Set.Files[n], render.Files[n]
		if bytes.Equal(ours, theirs) {
			continue
		}
		d, err := git.Diff(ctx, n, theirs, ours)
		if err != nil {
			// No git here (a minimal machine): name the file at least.
			fmt.Fprintf(w, "%s differs from asb's render (%d bytes against %d; no diff: %v)\n", n, len(ours), len(theirs), err)
			continue
		}
		fmt.Fprint(w, d)
	}
	if v.Set.Origin != render.Origin {
		fmt.Fprintf(w, "workspace origin (asb.yaml): %q\n", v.Set.Origin)
	}
	return nil
}

// ApproveEdit keeps an approved folder approved across an edit asb made for
// the user (secret add, network allow, update): when before was trusted,
// the content after is approved too. An edit never approves a folder that
// was not trusted before it.
func ApproveEdit(dir string, before *Verdict, getenv func(string) string) error {
	if before == nil || !before.Trusted || before.Store == nil {
		return nil // not trusted, or no state folder to keep approvals in
	}
	after, err := ReadTrustSet(dir)
	if err != nil {
		return err
	}
	if after.Same(before.Set) {
		return nil
	}
	return before.Store.Approve(dir, after.Hash())
}

// NotTrustedError is a folder asb refuses to run.
type NotTrustedError struct {
	Dir string
	Why string
}

func (e *NotTrustedError) Error() string {
	return fmt.Sprintf("refused: this outer folder is not approved to run: %s. Look at what it would run (above, or asb trust --show), then approve it with: asb trust -d %s", e.Why, path.Clean(e.Dir))
}

// IsNotTrusted reports whether err is a NotTrustedError.
func IsNotTrusted(err error) bool {
	var nt *NotTrustedError
	return errors.As(err, &nt)
}
