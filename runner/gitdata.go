package runner

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/agents-sandbox/asb/internal/folderfs"
	"github.com/agents-sandbox/asb/schema"
)

// A repository the VM can write is read by asb as data: the few files it
// needs (HEAD, a ref, the origin's URL) are read through an os.Root of its
// .git (no link leads out of it), size-limited, and their form checked;
// no git runs there.

var hashRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`) })

// maxRefFile bounds what asb reads of a ref file of a repository the VM
// writes (HEAD, a loose ref); packed-refs may be larger.
const (
	maxRefFile    = 4096
	maxPackedRefs = 64 << 20
	// maxRefName bounds a ref's full name (ValidRefName).
	maxRefName = 1024
)

// ValidRefName reports whether name is a full ref name (refs/…) as git
// accepts one (git check-ref-format): no control character, space or
// ~^:?*[\, no "..", "@{" or "//", no component that starts with a dot or
// ends in .lock, not ending in / or .; and UTF-8. What it may still hold
// (a C1 control, a bidi override) is shown through asb's printer.
func ValidRefName(name string) bool {
	if !strings.HasPrefix(name, "refs/") || len(name) > maxRefName || !utf8.ValidString(name) ||
		strings.ContainsAny(name, " ~^:?*[\\\x7f") || strings.Contains(name, "..") || strings.Contains(name, "@{") ||
		strings.HasSuffix(name, "/") || strings.HasSuffix(name, ".") {
		return false
	}
	for _, r := range name {
		if r < 0x20 {
			return false
		}
	}
	for c := range strings.SplitSeq(name, "/") {
		if c == "" || strings.HasPrefix(c, ".") || strings.HasSuffix(c, ".lock") {
			return false
		}
	}
	return true
}

// Head is what a repository's HEAD says: the branch checked out, or the
// commit when it is detached.
type Head struct {
	Ref    string // refs/heads/NAME; "" when detached
	Commit string // the commit when detached
}

// Branch is the branch of a HEAD that names one ("" when detached).
func (h Head) Branch() string { return strings.TrimPrefix(h.Ref, "refs/heads/") }

// readSmall reads name of root, refusing a link and anything over max bytes.
func readSmall(root *os.Root, name string, max int64) ([]byte, error) {
	fi, err := root.Lstat(name)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a plain file", name)
	}
	f, err := folderfs.OpenNoBlock(root, name) // not waiting on a FIFO put there since
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a plain file", name)
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(b)) > max {
		err = fmt.Errorf("%s is over %d bytes", name, max)
	}
	return b, err
}

// parseHead reads the content of a HEAD file: "ref: refs/heads/NAME" or a
// commit.
func parseHead(raw []byte) (Head, error) {
	s := strings.TrimSpace(string(raw))
	if ref, ok := strings.CutPrefix(s, "ref: "); ok {
		if !ValidRefName(ref) || !strings.HasPrefix(ref, "refs/heads/") {
			return Head{}, fmt.Errorf("HEAD names %q, not a branch", ref)
		}
		return Head{Ref: ref}, nil
	}
	if !hashRe().MatchString(s) {
		return Head{}, errors.New("HEAD is neither a branch nor a commit")
	}
	return Head{Commit: s}, nil
}

// ReadHead reads HEAD of the repository whose .git is gitDir, as data.
func ReadHead(gitDir *os.Root) (Head, error) {
	raw, err := readSmall(gitDir, "HEAD", maxRefFile)
	if err != nil {
		return Head{}, err
	}
	return parseHead(raw)
}

// ResolveRef is the commit a ref names in the repository whose .git is
// gitDir, read as data (its loose file, else packed-refs); "" when it has
// none.
func ResolveRef(gitDir *os.Root, ref string) string {
	if !ValidRefName(ref) {
		return ""
	}
	if raw, err := readSmall(gitDir, filepath.FromSlash(ref), maxRefFile); err == nil {
		if s := strings.TrimSpace(string(raw)); hashRe().MatchString(s) {
			return s
		}
		return ""
	}
	raw, err := readSmall(gitDir, "packed-refs", maxPackedRefs)
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		hash, name, ok := strings.Cut(sc.Text(), " ")
		if ok && name == ref && hashRe().MatchString(hash) {
			return hash
		}
	}
	return ""
}

// ReadOrigin returns where the checkout at dir comes from, read as data
// from its .git (which the VM may have written): the origin remote's URL
// of .git/config, the branch of HEAD and its commit. ok is false when dir
// has no .git folder or no origin. The URL is checked when it is used
// (schema.CheckRecordedOrigin, by asb sync); an include of the config is
// not followed.
func ReadOrigin(dir string) (o schema.WorkspaceOrigin, ok bool) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return o, false
	}
	defer root.Close()
	if fi, err := root.Lstat(".git"); err != nil || !fi.IsDir() {
		return o, false
	}
	gitDir, err := root.OpenRoot(".git")
	if err != nil {
		return o, false
	}
	defer gitDir.Close()
	raw, err := readSmall(gitDir, "config", maxRefFile*16)
	if err != nil {
		return o, false
	}
	if o.URL = configValue(raw, `remote "origin"`, "url"); o.URL == "" {
		return o, false
	}
	if h, err := ReadHead(gitDir); err == nil {
		o.Branch = h.Branch()
		o.Commit = h.Commit
		if h.Ref != "" {
			o.Commit = ResolveRef(gitDir, h.Ref)
		}
	}
	return o, true
}

// configValue is the last value of key in section of a git config file's
// content (a plain reading: sections, keys, quoted values, comments; no
// include is followed). Section names compare as git does: the section
// itself case-insensitively, a quoted subsection exactly.
func configValue(raw []byte, section, key string) string {
	want := normSection(section)
	in, val := false, ""
	for line := range strings.SplitSeq(string(raw), "\n") {
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "["):
			end := strings.Index(t, "]")
			in = end > 0 && normSection(t[1:end]) == want
		case in && t != "" && t[0] != '#' && t[0] != ';':
			k, v, found := strings.Cut(t, "=")
			if found && strings.EqualFold(strings.TrimSpace(k), key) {
				val = unquoteConfig(strings.TrimSpace(v))
			}
		}
	}
	return val
}

func normSection(s string) string {
	name, sub, ok := strings.Cut(strings.TrimSpace(s), " ")
	if !ok {
		return strings.ToLower(name)
	}
	return strings.ToLower(name) + " " + strings.TrimSpace(sub)
}

// unquoteConfig drops a trailing comment and the quotes of a config value.
func unquoteConfig(v string) string {
	var b strings.Builder
	quoted := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '"':
			quoted = !quoted
		case c == '\\' && i+1 < len(v):
			i++
			switch v[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'b':
				b.WriteByte('\b')
			default:
				b.WriteByte(v[i])
			}
		case !quoted && (c == '#' || c == ';'):
			return strings.TrimSpace(b.String())
		default:
			b.WriteByte(c)
		}
	}
	return strings.TrimSpace(b.String())
}
