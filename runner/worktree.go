package runner

import (
	"context"
	"sort"
	"strings"
)

// A session's checkout is the work tree of the one git asb runs on a tree
// the VM writes (HostRepo.Dirty, session rm's check of work not committed).

// Modes of a tree's entries, as git ls-tree shows them.
const (
	modeGitlink = "160000"
)

// treeModes maps each path of rev's tree (files, links, submodules; at any
// depth) to its mode.
type treeModes map[string]string

// treeModes lists rev's tree, read in the host repository.
func (h *HostRepo) treeModes(ctx context.Context, rev string) (treeModes, error) {
	out, err := h.output(ctx, "ls-tree", "-r", "-z", "--full-tree", "--end-of-options", rev)
	if err != nil {
		return nil, err
	}
	modes := treeModes{}
	for e := range strings.SplitSeq(string(out), "\x00") {
		meta, p, ok := strings.Cut(e, "\t")
		if mode, _, _ := strings.Cut(meta, " "); ok {
			modes[p] = mode
		}
	}
	return modes, nil
}

// gitlinks are the paths of the tree's submodules, sorted.
func (t treeModes) gitlinks() []string {
	var out []string
	for p, mode := range t {
		if mode == modeGitlink {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}
