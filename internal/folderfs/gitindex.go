package folderfs

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agents-sandbox/asb/internal/hostgit"
)

// The outer folder's git index, read by asb itself: which paths the
// repository tracks. No git runs (so no config, hook or attribute of any
// repository is read), and only the repository that holds the outer
// folder is looked at, found by walking up from it, never down into
// workspace/ (whose .git the VM writes).

// maxIndex bounds the index asb reads: an outer folder's repository holds
// a few dozen files.
const maxIndex = 64 << 20

// Repo is the repository that holds an outer folder, as its index sees it.
type Repo struct {
	Index  string // the index file
	Prefix string // the outer folder's path in the repository, "" or "sub/dir/"
	// Pointer: the .git is a file (a worktree's or a submodule's "gitdir:"
	// line) naming the git folder that holds Index.
	Pointer bool
}

// FindRepo finds the repository holding dir: the nearest .git at or above
// it (a folder, or a worktree's "gitdir:" file). ok is false when there is
// none.
func FindRepo(dir string) (repo Repo, ok bool, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Repo{}, false, err
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	p, fi, found := hostgit.DotGitAbove(abs)
	if !found {
		return Repo{}, false, nil
	}
	dotgit := filepath.Join(p, ".git")
	gitdir := dotgit
	if fi.Mode().IsRegular() {
		if gitdir, err = WorktreeGitDir(p, dotgit); err != nil {
			return Repo{}, false, err
		}
	} else if !fi.IsDir() {
		return Repo{}, false, fmt.Errorf("%s is neither a folder nor a gitdir file", dotgit)
	}
	rel, err := filepath.Rel(p, abs)
	if err != nil {
		return Repo{}, false, err
	}
	prefix := ""
	if rel != "." {
		prefix = filepath.ToSlash(rel) + "/"
	}
	return Repo{Index: filepath.Join(gitdir, "index"), Prefix: prefix, Pointer: fi.Mode().IsRegular()}, true, nil
}

// WorktreeGitDir is the git dir a worktree's .git file (in root) names.
func WorktreeGitDir(root, dotgit string) (string, error) {
	raw, err := os.ReadFile(dotgit)
	if err != nil {
		return "", err
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(raw)), "gitdir:")
	if !ok {
		return "", fmt.Errorf("%s is not a git worktree link", dotgit)
	}
	gitdir = strings.TrimSpace(gitdir)
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(root, gitdir)
	}
	return filepath.Clean(gitdir), nil
}

// IndexPaths lists the paths of the index file at path (version 2, 3 or
// 4, SHA-1 or SHA-256). A split index's shared part is read too: the
// union of both is a superset of what is tracked (an entry the split part
// deletes is still listed), which errs on the side of "tracked". A sparse
// index's folder entries end in "/".
//
// The stamp is the one of the file read (git replaces the index by a
// rename, so a later stamp of the path that differs means a new index).
func IndexPaths(path string) ([]string, Stamp, error) {
	ix, st, err := ReadIndex(path)
	return ix.Paths, st, err
}

// Index is what asb reads of a git index.
type Index struct {
	Paths []string // every entry's path
	// Gitlinks are the paths of the submodules' entries (mode 160000):
	// a folder whose files the submodule's own index lists.
	Gitlinks []string
}

// ReadIndex is IndexPaths with the submodules' entries named too.
func ReadIndex(path string) (Index, Stamp, error) {
	raw, st, err := readIndexFile(path)
	if err != nil {
		return Index{}, st, err
	}
	ix, shared, err := parseIndex(raw)
	if err != nil {
		return Index{}, st, fmt.Errorf("%s: %w", path, err)
	}
	if shared != "" {
		sraw, _, err := readIndexFile(filepath.Join(filepath.Dir(path), "sharedindex."+shared))
		if err != nil {
			return Index{}, st, fmt.Errorf("the split index's shared part: %w", err)
		}
		more, _, err := parseIndex(sraw)
		if err != nil {
			return Index{}, st, fmt.Errorf("the split index's shared part: %w", err)
		}
		ix.Paths = append(ix.Paths, more.Paths...)
		ix.Gitlinks = append(ix.Gitlinks, more.Gitlinks...)
	}
	return ix, st, nil
}

func readIndexFile(path string) ([]byte, Stamp, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, Stamp{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, Stamp{}, err
	}
	st := StampOf(fi)
	if !fi.Mode().IsRegular() || fi.Size() > maxIndex {
		return nil, st, fmt.Errorf("%s is not an index asb reads (a special file, or over %d bytes)", path, maxIndex)
	}
	buf := make([]byte, fi.Size())
	if _, err := f.ReadAt(buf, 0); err != nil {
		return nil, st, err
	}
	return buf, st, nil
}

var errIndex = errors.New("not a git index asb can read")

// parseIndex returns the index's paths and, for a split index, the shared
// part's name. The object id's size (20 or 32 bytes) is the one with which
// the entries and extensions end exactly where the trailing checksum
// starts.
func parseIndex(raw []byte) (ix Index, shared string, err error) {
	for _, hashLen := range []int{20, 32} {
		ix, shared, err = parseIndexAs(raw, hashLen)
		if err == nil {
			return ix, shared, nil
		}
	}
	return Index{}, "", err
}

func parseIndexAs(raw []byte, hashLen int) (Index, string, error) {
	if len(raw) < 12+hashLen || string(raw[:4]) != "DIRC" {
		return Index{}, "", errIndex
	}
	version := binary.BigEndian.Uint32(raw[4:8])
	if version < 2 || version > 4 {
		return Index{}, "", fmt.Errorf("%w: version %d", errIndex, version)
	}
	n := binary.BigEndian.Uint32(raw[8:12])
	end := len(raw) - hashLen
	pos, ix, err := parseEntries(raw[:end], 12, int(n), version, hashLen)
	if err != nil {
		return Index{}, "", err
	}
	shared, err := parseExtensions(raw[pos:end], hashLen)
	return ix, shared, err
}

// parseEntries reads n entries from pos.
func parseEntries(raw []byte, pos, n int, version uint32, hashLen int) (int, Index, error) {
	fixed := 40 + hashLen + 2 // stat data, object id, flags
	paths := make([]string, 0, n)
	var gitlinks []string
	prev := ""
	for range n {
		if pos+fixed > len(raw) {
			return 0, Index{}, errIndex
		}
		start := pos
		mode := binary.BigEndian.Uint32(raw[pos+24:])
		flags := binary.BigEndian.Uint16(raw[pos+40+hashLen:])
		pos += fixed
		if flags&0x4000 != 0 {
			if version < 3 || pos+2 > len(raw) {
				return 0, Index{}, errIndex
			}
			pos += 2
		}
		var name string
		if version == 4 {
			strip, k := indexVarint(raw[pos:])
			if k == 0 || strip > uint64(len(prev)) {
				return 0, Index{}, errIndex
			}
			pos += k
			nul := bytes.IndexByte(raw[pos:], 0)
			if nul < 0 {
				return 0, Index{}, errIndex
			}
			name = prev[:len(prev)-int(strip)] + string(raw[pos:pos+nul])
			pos += nul + 1
		} else {
			nul := bytes.IndexByte(raw[pos:], 0)
			if nul < 0 {
				return 0, Index{}, errIndex
			}
			name = string(raw[pos : pos+nul])
			// 1 to 8 NULs pad the entry to a multiple of 8 bytes.
			pos = start + (pos+nul-start+8)&^7
			if pos > len(raw) {
				return 0, Index{}, errIndex
			}
		}
		// A split index's entry that replaces one of the shared part has
		// no name of its own.
		if name != "" {
			paths = append(paths, name)
			if mode&0o170000 == 0o160000 {
				gitlinks = append(gitlinks, name)
			}
		}
		prev = name
	}
	return pos, Index{Paths: paths, Gitlinks: gitlinks}, nil
}

// parseExtensions walks the extensions, which must fill ext exactly, and
// returns the split index's shared part ("link"), if any.
func parseExtensions(ext []byte, hashLen int) (string, error) {
	shared := ""
	for len(ext) > 0 {
		if len(ext) < 8 {
			return "", errIndex
		}
		sig, size := string(ext[:4]), binary.BigEndian.Uint32(ext[4:8])
		if uint64(size) > uint64(len(ext)-8) {
			return "", errIndex
		}
		body := ext[8 : 8+size]
		if sig == "link" {
			if len(body) < hashLen {
				return "", errIndex
			}
			if id := body[:hashLen]; !bytes.Equal(id, make([]byte, hashLen)) {
				shared = hex.EncodeToString(id)
			}
		}
		ext = ext[8+size:]
	}
	return shared, nil
}

// indexVarint decodes git's offset varint (index v4's prefix length).
func indexVarint(b []byte) (uint64, int) {
	if len(b) == 0 {
		return 0, 0
	}
	c := b[0]
	val := uint64(c & 127)
	i := 1
	for c&128 != 0 {
		if i >= len(b) || i > 9 {
			return 0, 0
		}
		val++
		c = b[i]
		val = val<<7 + uint64(c&127)
		i++
	}
	return val, i
}
