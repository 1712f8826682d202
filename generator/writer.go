package generator

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
)

// Action is what Apply does (or, in a dry run, would do) with one entry.
type Action string

// The actions, as `asb init` reports them.
const (
	Create    Action = "create"    // the file is new
	Unchanged Action = "unchanged" // the file already has this content
	Update    Action = "update"    // asb wrote it before, the user did not edit it since
	Kept      Action = "kept"      // the user edited it: left alone
	Overwrite Action = "overwrite" // edited, but --force: replaced, old copy in .orig
	Conflict  Action = "conflict"  // cannot be written (a folder where a file goes, …)
)

// Change is one line of the report.
type Change struct {
	Path   string
	Mode   fs.FileMode
	Dir    bool // a folder
	Action Action
	Why    string
	// Content, when set, is what is written instead of the plan's (a file
	// of AppendLines: the user's lines and the missing ones).
	Content []byte
}

// WriteOptions steer Apply.
type WriteOptions struct {
	DryRun bool // classify only, write nothing
	Force  bool // overwrite files the user edited, keeping FILE.orig
}

// ManifestPath records what asb wrote, to tell its own output from edits.
const ManifestPath = ".asb/generated.json"

type manifest struct {
	Files map[string]string `json:"files"` // path → sha256 of what asb wrote
}

// ConflictError lists the entries Apply cannot write; nothing was written.
type ConflictError struct{ Changes []Change }

func (e *ConflictError) Error() string {
	if len(e.Changes) == 1 {
		c := e.Changes[0]
		return fmt.Sprintf("cannot write the outer folder; nothing was changed: %s: %s", c.Path, c.Why)
	}
	var b strings.Builder
	b.WriteString("cannot write the outer folder; nothing was changed:")
	for _, c := range e.Changes {
		fmt.Fprintf(&b, "\n  %s: %s", c.Path, c.Why)
	}
	return b.String()
}

// Apply writes the plan under root. Each file is written to a temporary file
// in its folder and renamed into place; if anything fails (or ctx is done)
// before the last rename, every change is rolled back, so a failed run leaves
// the folder as it was. It returns what it did, entry by entry.
func Apply(ctx context.Context, root string, plan *Plan, opts WriteOptions) ([]Change, error) {
	changes, _, err := ApplyUndoable(ctx, root, plan, opts)
	return changes, err
}

// ApplyUndoable is Apply that also returns undo, which takes back what
// this run wrote, and only that (files it created or replaced, folders it
// made), for a step after the write that fails (asb init's git init).
func ApplyUndoable(ctx context.Context, root string, plan *Plan, opts WriteOptions) (changes []Change, undo func() error, err error) {
	noop := func() error { return nil }
	changes, err = Classify(root, plan, opts)
	if err != nil {
		return nil, noop, err
	}
	var conflicts []Change
	for _, c := range changes {
		// Entries under a folder already in conflict add nothing to fix.
		if c.Action == Conflict && !strings.HasPrefix(c.Why, "under ") {
			conflicts = append(conflicts, c)
		}
	}
	if len(conflicts) > 0 {
		return changes, noop, &ConflictError{Changes: conflicts}
	}
	if opts.DryRun {
		return changes, noop, nil
	}
	tx := &txn{}
	if err := tx.run(ctx, root, plan, changes); err != nil {
		if rerr := tx.rollback(); rerr != nil {
			return nil, noop, fmt.Errorf("%w (and rolling back failed: %v)", err, rerr)
		}
		return nil, noop, err
	}
	return changes, tx.rollback, nil
}
