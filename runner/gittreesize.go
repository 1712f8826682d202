package runner

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strconv"
)

// TreeSize is what a checkout of a commit writes: its files' bytes as
// git writes them out (a blob the VM made is small compressed and may be
// huge written out: a commit of zeros), their number, and the largest.
type TreeSize struct {
	Bytes   int64
	Files   int
	Largest string // the path of the largest file
	MaxSize int64  // its bytes
}

// TreeSize reads what checking out rev would write, from the host
// repository's objects (lsTree with sizes, streamed: a tree of millions
// of entries is counted, not held). A submodule's commit is not entered,
// as MakeCheckout does not.
func (h *HostRepo) TreeSize(ctx context.Context, rev string) (TreeSize, error) {
	var s treeSizer
	if err := h.lsTree(ctx, rev, true, s.add); err != nil {
		return TreeSize{}, fmt.Errorf("read the files of %s: %w", rev, err)
	}
	return s.size, nil
}

// treeSizer adds up the files of a tree, entry by entry.
type treeSizer struct{ size TreeSize }

func (s *treeSizer) add(e treeEntry) error {
	if e.Type != "blob" {
		return nil
	}
	if e.Size > math.MaxInt64-s.size.Bytes {
		s.size.Bytes = math.MaxInt64 // a made-up tree's sum saturates
	} else {
		s.size.Bytes += e.Size
	}
	s.size.Files++
	if e.Size > s.size.MaxSize {
		s.size.Largest, s.size.MaxSize = e.Path, e.Size
	}
	return nil
}

// treeEntry is one entry of git ls-tree -r: its mode, type ("blob",
// "tree", "commit" for a submodule), path and, when asked for, its size
// (-1 otherwise, and for a submodule).
type treeEntry struct {
	Mode, Type, Path string
	Size             int64
}

// lsTree hands each entry of rev's tree (at any depth) to each, as git
// ls-tree -r -z [-l] writes it in the host repository: streamed, record
// by record, so a tree of millions of entries is never held whole.
func (h *HostRepo) lsTree(ctx context.Context, rev string, sizes bool, each func(treeEntry) error) error {
	args := []string{"ls-tree", "-r", "-z", "--full-tree"}
	if sizes {
		args = append(args, "-l")
	}
	w := treeRecords{sizes: sizes, each: each}
	_, err := h.run(ctx, gitRun{stdout: &w}, append(args, "--end-of-options", rev)...)
	if err == nil {
		err = w.err
	}
	return err
}

// maxTreeRecord bounds one record of ls-tree: a path the VM made up can
// be any length in a tree object, and is not held whole past this.
const maxTreeRecord = 1 << 20

// treeRecords parses ls-tree -z's records as they come: "MODE TYPE
// OBJECT[ SIZE]\tPATH\x00", SIZE (with -l) right-aligned, "-" for a
// submodule. The first error stops the parse and is kept.
type treeRecords struct {
	sizes   bool
	each    func(treeEntry) error
	partial []byte
	err     error
}

func (w *treeRecords) Write(p []byte) (int, error) {
	n := len(p)
	for w.err == nil {
		i := bytes.IndexByte(p, 0)
		if i < 0 {
			if w.partial = append(w.partial, p...); len(w.partial) > maxTreeRecord {
				w.err = fmt.Errorf("git ls-tree wrote a record over %d bytes", maxTreeRecord)
			}
			break
		}
		rec := p[:i]
		if len(w.partial) > 0 {
			rec = append(w.partial, rec...)
			w.partial = w.partial[:0]
		}
		w.err = w.record(rec)
		p = p[i+1:]
	}
	return n, nil
}

func (w *treeRecords) record(rec []byte) error {
	meta, path, ok := bytes.Cut(rec, []byte{'\t'})
	fields := bytes.Fields(meta)
	want := 3
	if w.sizes {
		want = 4
	}
	if !ok || len(fields) != want {
		return fmt.Errorf("git ls-tree wrote %q", rec)
	}
	e := treeEntry{Mode: string(fields[0]), Type: string(fields[1]), Path: string(path), Size: -1}
	if w.sizes && e.Type == "blob" {
		n, err := strconv.ParseInt(string(fields[3]), 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("git ls-tree wrote %q", rec)
		}
		e.Size = n
	}
	return w.each(e)
}
