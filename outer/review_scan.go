package outer

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agents-sandbox/asb/internal/folderfs"
	"github.com/agents-sandbox/asb/schema"
)

// reviewReads counts the review's reads of file content (tests).
var reviewReads atomic.Int64

// scanner describes the table's files of one tree, against the last
// review's record.
type scanner struct {
	root      *os.Root
	last, out map[string]reviewed
	// left is how many more entries the walk of a table folder may look
	// at; seen, the folders it walked (device and inode).
	left int
	seen map[[2]uint64]bool
	// start is when the scan began (UnixNano): a file stamped after
	// start less racyNs keeps no stamp in the record, as its next write
	// might not change it; the next scan reads it again.
	start int64
}

// scanHostRun describes the table's files at the top of tree, reading
// again (hashing) only those whose stamp differs from last.
func scanHostRun(r *folderfs.Root, tree string, table schema.HostRunTable, last map[string]reviewed) (map[string]reviewed, error) {
	out := map[string]reviewed{}
	root, err := r.OpenRoot(tree)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, folderfs.Explain(tree, err)
	}
	defer root.Close()
	s := &scanner{root: root, last: last, out: out, start: time.Now().UnixNano()}
	for _, e := range table {
		name := strings.TrimSuffix(e.Path, "/")
		fi, err := root.Lstat(name)
		if err != nil {
			continue
		}
		s.left, s.seen = maxReviewEntries, map[[2]uint64]bool{}
		if !s.entry(name, fi, strings.HasSuffix(e.Path, "/")) {
			out[name+"/"] = reviewed{Kind: kindUnread}
		}
	}
	return out, nil
}

// entry describes name (fi: its Lstat): a file, a link and what it leads
// to, or, in a folder of the table (folder), a folder and what is under
// it. It reports false when a walk stopped at maxReviewEntries.
func (s *scanner) entry(name string, fi fs.FileInfo, folder bool) bool {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return s.link(name, folder)
	case fi.IsDir() && folder:
		return s.walk(name, fi)
	case fi.Mode().IsRegular():
		s.out[name] = s.content(name, fi, reviewed{Kind: "file"})
	}
	return true
}

// link describes the link name by its text and what it leads to inside
// the tree, as every tool reads through it: a file's hash and stamp in the
// link's entry, a folder (in a folder of the table) walked as one. A link
// that leads out of the tree (the root refuses it) or nowhere keeps its
// text alone.
func (s *scanner) link(name string, folder bool) bool {
	target, _ := s.root.Readlink(name)
	v := reviewed{Kind: "link", Target: target}
	to, err := s.root.Stat(name)
	switch {
	case err != nil:
	case to.Mode().IsRegular():
		v = s.content(name, to, v)
	case to.IsDir() && folder:
		s.out[name] = v
		return s.walk(name, to)
	}
	s.out[name] = v
	return true
}

// walk describes what is under the folder name (fi: its Stat), up to
// s.left entries (folders and links count), each folder once: a link may
// lead back up. It reports false when it stopped at the limit.
func (s *scanner) walk(name string, fi fs.FileInfo) bool {
	if strings.Count(name, "/") >= maxReviewDepth {
		return false
	}
	if id := folderfs.StampOf(fi); id.Ino != 0 { // no inode (not Linux or macOS): the limit ends a loop
		if s.seen[[2]uint64{id.Dev, id.Ino}] {
			return true
		}
		s.seen[[2]uint64{id.Dev, id.Ino}] = true
	}
	f, err := folderfs.OpenNoBlock(s.root, name) // not waiting on a FIFO put in the folder's place since
	if err != nil {
		return true // an unreadable part: what can be read is reviewed
	}
	// One more than may be looked at tells that there are more.
	entries, _ := f.ReadDir(s.left + 1)
	f.Close()
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	for _, d := range entries {
		if s.left == 0 {
			return false
		}
		s.left--
		fi, err := d.Info()
		if err == nil && !s.entry(name+"/"+d.Name(), fi, true) {
			return false
		}
	}
	return true
}

// content is v with the hash and stamp of the file that fi describes,
// reading it only when its stamp differs from the last review's. Size and
// times are the VM's to choose (touch -r puts a time back); the change
// time and inode are not, so a write always changes the stamp. A record
// without a stamp (racy, or from an older asb) means: read it again.
func (s *scanner) content(name string, fi fs.FileInfo, v reviewed) reviewed {
	stamp := folderfs.StampOf(fi)
	was := s.last[name]
	if was.Stamp != (folderfs.Stamp{}) && was.Stamp == stamp && was.Kind == v.Kind && was.Target == v.Target {
		v.SHA256, v.Stamp = was.SHA256, stamp
		return v
	}
	var held bool
	v.SHA256, held = s.hash(name, stamp)
	if held && !stamp.Since(s.start-racyNs) {
		v.Stamp = stamp
	}
	return v
}

// Prefixes of a hash made from a file's stamp rather than its content
// (stampHash): such a file is listed whenever it is written.
const (
	hashLarge      = "large:"      // over maxReviewHash: never judged by a prefix
	hashUnreadable = "unreadable:" // it could not be read
)

// hash is the hex SHA-256 of the file name, whose stamp was stamp, or a
// hash of its stamp when it is too large or cannot be read. held reports
// that the file read is the one stamped (not one put in its place since):
// only then may its stamp stand for what was read.
func (s *scanner) hash(name string, stamp folderfs.Stamp) (sum string, held bool) {
	if stamp.Size > maxReviewHash {
		return s.stampHash(hashLarge, stamp), true
	}
	// Not blocked by a FIFO put in the file's place since its stamp.
	f, err := s.root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return s.stampHash(hashUnreadable, stamp), true
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return s.stampHash(hashUnreadable, stamp), false
	}
	reviewReads.Add(1)
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, maxReviewHash+1))
	held = folderfs.StampOf(fi) == stamp
	switch {
	case err != nil:
		return s.stampHash(hashUnreadable, stamp), held
	case n > maxReviewHash: // it grew since its stamp
		return s.stampHash(hashLarge, stamp), held
	}
	return hex.EncodeToString(h.Sum(nil)), held
}

// stampHash stands for the content of a file asb does not read: its stamp,
// so that any write lists it. A racy stamp might not show the next write:
// its hash then also holds the scan's time and matches no later one (the
// file is listed again, rather than a write missed).
func (s *scanner) stampHash(prefix string, stamp folderfs.Stamp) string {
	raw, _ := json.Marshal(stamp)
	if stamp.Since(s.start - racyNs) {
		raw = strconv.AppendInt(raw, s.start, 10)
	}
	sum := sha256.Sum256(raw)
	return prefix + hex.EncodeToString(sum[:])
}
