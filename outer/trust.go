package outer

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agents-sandbox/asb/internal/folderfs"
	"github.com/agents-sandbox/asb/runner"
	"github.com/agents-sandbox/asb/schema"
)

// Trust: who may make what run. A cloned outer folder is input from
// whoever can push to its repository: its files, asb.yaml's answers and
// anything force-committed. What asb runs or hands to msb from it — the
// Taskfile, the VM's and the secrets' configs, the image's build context,
// the agent's config, the workspace's origin — runs only once this user
// approved that content (as direnv's allow and mise's trust do), or when
// it is exactly what asb renders from answers this user approved. The
// approvals live in the user's state folder (approvals.go), never in the
// repository, so a commit cannot approve itself; and a policy outside
// every folder (policy.go) says what no folder may ask for, approved or
// not. docs/trust.md tells it whole.

// TrustSet is the content of an outer folder that asb runs or hands on.
type TrustSet struct {
	Files map[string][]byte // relative path → content; AnswersFile: the answers
	// untracked says why asb cannot know what git tracks in the folder
	// ("" when it can): every file below the top is in the set then
	// (trust_untracked.go).
	untracked string
}

// AnswersFile is the name under which a trust set holds asb.yaml's
// answers and workspace origin (not the asb version that wrote them).
const AnswersFile = schema.RecordFile

// toolchainDir is the image's build context.
const toolchainDir = "toolchain"

// untrusted are the top-level files outside the trust set: the user's own
// values, text nobody runs, and the record (its answers are in the set,
// as AnswersFile, without the version line).
var untrusted = []string{SecretsEnvFile, "README.md", ".gitignore", schema.RecordFile}

// trustScope says which files of a folder are in its trust set.
type trustScope struct {
	agentDirs []string // the agents' config folders (read-only in the VM)
}

func newScope(agents []schema.Agent) trustScope {
	var s trustScope
	for _, a := range agents {
		if a.ConfigDir != "" && !strings.Contains(a.ConfigDir, "/") && !slices.Contains(s.agentDirs, a.ConfigDir) {
			s.agentDirs = append(s.agentDirs, a.ConfigDir)
		}
	}
	return s
}

// has says whether the file rel of an outer folder is in its trust set: a
// top-level file but the untrusted ones, one under toolchain/ but the
// host's CA copies asb writes there, one under .asb-base/ or an agent's
// config folder.
func (sc trustScope) has(rel string) bool {
	top, rest, nested := strings.Cut(rel, "/")
	switch {
	case !nested:
		return !slices.Contains(untrusted, rel)
	case strings.EqualFold(top, toolchainDir):
		return !IsHostCert(rel)
	case top == schema.BaseDir && rest == schema.RecordFile:
		return false // asb update writes asb.yaml whole: no merge reads its base
	}
	return rest != "" && sc.tree(top)
}

// tree reports whether the top-level folder name is read whole into the
// set: toolchain/, .asb-base/ (what asb update merges against decides what
// it writes, and an update of an approved folder stays approved, so a
// pulled base is approved like the rest), an agent's config folder. Case
// is ignored: on a file system that ignores it (macOS's, Windows'), a
// committed Toolchain/ is what the builder reads as toolchain/.
func (sc trustScope) tree(name string) bool {
	return strings.EqualFold(name, toolchainDir) || strings.EqualFold(name, schema.BaseDir) ||
		slices.ContainsFunc(sc.agentDirs, func(d string) bool { return strings.EqualFold(d, name) })
}

// ReadTrustSet reads the trust set of dir with asb's own agent presets.
func ReadTrustSet(dir string) (*TrustSet, error) {
	s, _, err := readTrustSet(dir, newScope(schema.DefaultAgents()))
	return s, err
}

// readTrustSet reads every plain file at the top of the folder but the
// untrusted ones and those git ignores that nothing reads (ignored.go),
// every file under toolchain/ but the host's CA copies asb writes there,
// the agents' config folders, every Taskfile the Taskfile includes
// (trust_includes.go), every other file git tracks below the top but in
// workspace/ (trust_tracked.go) or, where asb cannot know what git
// tracks, every file below the top but workspace/'s and asb's and
// go-task's own records (trust_untracked.go), and asb.yaml's answers. A link among them, or a
// special file, is an error: asb would not know what it runs. It returns
// the set and the folder's stamps: everything it read (for the cache).
func readTrustSet(dir string, sc trustScope) (*TrustSet, *stamps, error) {
	root, err := folderfs.Open(dir)
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	s := &TrustSet{Files: map[string][]byte{}}
	st := newStamps(root)
	entries, err := fs.ReadDir(root.FS(), ".")
	if err != nil {
		return nil, nil, err
	}
	st.add(".")
	for _, e := range entries {
		name := e.Name()
		tree := sc.tree(name)
		switch {
		case tree && e.Type()&fs.ModeSymlink != 0:
			target, _ := root.Readlink(name)
			return nil, nil, fmt.Errorf("not supported by asb: %s is a link (to %s): the set you approve holds what is under %s/ itself, and through a link what it leads to would change after your approval unseen; make it the folder (git mv the folder it leads to in its place)", name, target, name)
		case tree && e.IsDir():
			if err := s.readTree(root, name, sc, st); err != nil {
				return nil, nil, err
			}
		case e.IsDir() || !sc.has(name):
		case e.Type()&fs.ModeSymlink != 0:
			if err := s.readLink(root, name, st); err != nil {
				return nil, nil, err
			}
		default:
			if err := s.readFile(root, name, e, st); err != nil {
				return nil, nil, err
			}
		}
	}
	if err := s.readIncludes(root, runner.TaskfileName, map[string]bool{}, st); err != nil {
		return nil, nil, err
	}
	if err := s.dropIgnored(root, st); err != nil {
		return nil, nil, err
	}
	if err := s.readTrackedSub(root, sc, st); err != nil {
		return nil, nil, err
	}
	if err := s.readAnswers(root, st); err != nil {
		return nil, nil, err
	}
	return s, st, nil
}

func (s *TrustSet) readTree(root *folderfs.Root, top string, sc trustScope, st *stamps) error {
	return fs.WalkDir(root.FS(), top, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			st.add(p) // a file added below changes the folder's stamp
			return nil
		}
		if !sc.has(p) {
			return nil
		}
		return s.readFile(root, p, d, st)
	})
}

// readLink adds a top-level link to the set by its target: a link to a
// folder inside the outer folder (a bind's source, say), which the mount
// rules judge where they meet it. A link to a file, or out of the folder,
// is refused: what asb, go-task or msb would read through it is not in
// the set, and could change after an approval.
func (s *TrustSet) readLink(root *folderfs.Root, rel string, st *stamps) error {
	target, err := root.Readlink(rel)
	if err != nil {
		return folderfs.Explain(rel, err)
	}
	if fi, err := root.Stat(rel); err != nil || !fi.IsDir() {
		return fmt.Errorf("%s is a link (to %s) that leads to a file, out of the outer folder or nowhere: asb runs no folder whose files it cannot read as they are; replace it with the file, or write the folder's own path in sandbox.yaml (with # %s) instead of a link", rel, target, schema.HostConsent)
	}
	st.add(rel)
	s.Files[rel] = fmt.Appendf(nil, "(a link to the folder %s)\n", target)
	return nil
}

// readFile adds rel to the set: its content, or, for a file larger than
// asb reads whole (a binary in the image's build context), a line with its
// size and digest, which the hash and the diff use alike.
func (s *TrustSet) readFile(root *folderfs.Root, rel string, d fs.DirEntry, st *stamps) error {
	if !d.Type().IsRegular() {
		return notPlain(rel)
	}
	f, err := root.OpenNoBlock(rel) // not waiting on a FIFO put in the file's place since it was listed
	if err != nil {
		return folderfs.Explain(rel, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return notPlain(rel)
	}
	st.put(rel, folderfs.StampOf(fi)) // the file read, not what the path names later
	trustReads.Add(1)
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

func notPlain(rel string) error {
	return fmt.Errorf("%s is not a plain file (a link or a device): asb runs no folder whose Taskfile, configs or image it cannot read as they are; replace it with a file", rel)
}

// readAnswers adds asb.yaml's answers and workspace origin, as
// AnswersFile: not the version of asb that wrote them, nor the comments,
// so an asb update that keeps the answers keeps them. A record asb cannot
// read stands as it is.
func (s *TrustSet) readAnswers(root *folderfs.Root, st *stamps) error {
	raw, err := root.ReadFile(schema.RecordFile, schema.MaxFileSize)
	st.add(schema.RecordFile)
	if err != nil {
		return nil //nolint:nilerr // no record: no answers (nothing renders, nothing is trusted as a render)
	}
	trustReads.Add(1)
	s.Files[AnswersFile] = canonicalAnswers(raw)
	return nil
}

// canonicalAnswers is what of a record the trust set holds.
func canonicalAnswers(raw []byte) []byte {
	var r schema.Record
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&r); err != nil || r.Format != schema.RecordFormat {
		return raw
	}
	return answersOf(&r)
}

func answersOf(r *schema.Record) []byte {
	b, err := yaml.Marshal(struct {
		Agent        string                 `yaml:"agent"`
		AgentVersion string                 `yaml:"agent_version"`
		Answers      schema.InitOptions     `yaml:"answers"`
		Workspace    schema.WorkspaceOrigin `yaml:"workspace"`
	}{r.Agent, r.AgentVersion, r.Answers, r.Workspace})
	if err != nil {
		return []byte(err.Error())
	}
	return b
}

// trustVersion changes when what a hash covers changes: an approval of an
// older set never matches a newer one.
const trustVersion = "asb trust set 2\n"

// Hash is the digest an approval is keyed by.
func (s *TrustSet) Hash() string {
	h := sha256.New()
	h.Write([]byte(trustVersion))
	for _, name := range s.names() {
		fmt.Fprintf(h, "%d:%s\n%d:", len(name), name, len(s.Files[name]))
		h.Write(s.Files[name])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// AnswersHash is the digest of the answers alone.
func (s *TrustSet) AnswersHash() string {
	sum := sha256.Sum256(append([]byte(trustVersion), s.Files[AnswersFile]...))
	return hex.EncodeToString(sum[:])
}

// Digests are the files' digests, as an approval records them.
func (s *TrustSet) Digests() map[string]string {
	out := map[string]string{}
	for n, b := range s.Files {
		sum := sha256.Sum256(b)
		out[n] = hex.EncodeToString(sum[:])
	}
	return out
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

// Count is how many files the set holds, its answers aside.
func (s *TrustSet) Count() int {
	if _, ok := s.Files[AnswersFile]; ok {
		return len(s.Files) - 1
	}
	return len(s.Files)
}

// Same reports whether s and o hold the same content.
func (s *TrustSet) Same(o *TrustSet) bool { return o != nil && s.Hash() == o.Hash() }

// consentMark starts the comments by which a folder widens its boundary
// (# asb: allow-home): never trusted without the user's own approval.
const consentMark = "asb: allow"

// widens reports whether the set carries a consent comment.
func (s *TrustSet) widens() bool {
	for _, b := range s.Files {
		if bytes.Contains(b, []byte(consentMark)) {
			return true
		}
	}
	return false
}

// renderTrustSet is the trust set asb renders from dir's recorded
// answers (asb.yaml) with the templates of tree.
func renderTrustSet(dir string, tree fs.FS, sc trustScope) (*TrustSet, error) {
	plan, rec, err := renderRecord(dir, tree, "", nil)
	if err != nil {
		return nil, err
	}
	s := &TrustSet{Files: map[string][]byte{AnswersFile: answersOf(rec)}}
	sub := sc.renderSub(dir) // as readTrackedSub reads the folder
	for _, f := range plan.Files {
		if !f.Dir && (sc.has(f.Path) || strings.Contains(f.Path, "/") && sub(f.Path, f.Content)) {
			s.Files[f.Path] = f.Content
		}
	}
	return s, nil
}
