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
// repository's objects (git ls-tree -r -l, streamed: a tree of millions
// of entries is counted, not held). A submodule's commit is not entered,
// as MakeCheckout does not.
func (h *HostRepo) TreeSize(ctx context.Context, rev string) (TreeSize, error) {
	var w treeSizer
	_, err := h.run(ctx, gitRun{stdout: &w}, "ls-tree", "-r", "-l", "-z", "--full-tree", "--end-of-options", rev)
	if err == nil {
		err = w.err
	}
	if err != nil {
		return TreeSize{}, fmt.Errorf("read the files of %s: %w", rev, err)
	}
	return w.size, nil
}

// maxTreeRecord bounds one record of ls-tree: a path the VM made up can
// be any length in a tree object, and is not held whole past this.
const maxTreeRecord = 1 << 20

// treeSizer adds up ls-tree -l -z's records as they come: "MODE TYPE
// OBJECT SIZE\tPATH\x00", SIZE right-aligned, "-" for a submodule.
type treeSizer struct {
	size    TreeSize
	partial []byte
	err     error
}

func (w *treeSizer) Write(p []byte) (int, error) {
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
		w.err = w.add(rec)
		p = p[i+1:]
	}
	return n, nil
}

func (w *treeSizer) add(rec []byte) error {
	meta, path, ok := bytes.Cut(rec, []byte{'\t'})
	fields := bytes.Fields(meta)
	if !ok || len(fields) != 4 {
		return fmt.Errorf("git ls-tree wrote %q", rec)
	}
	if string(fields[1]) != "blob" {
		return nil
	}
	n, err := strconv.ParseInt(string(fields[3]), 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("git ls-tree wrote %q", rec)
	}
	if n > math.MaxInt64-w.size.Bytes {
		w.size.Bytes = math.MaxInt64 // a made-up tree's sum saturates
	} else {
		w.size.Bytes += n
	}
	w.size.Files++
	if n > w.size.MaxSize {
		w.size.Largest, w.size.MaxSize = string(path), n
	}
	return nil
}
