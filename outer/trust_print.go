package outer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"

	"github.com/agents-sandbox/asb/internal/folderfs"
	"github.com/agents-sandbox/asb/internal/termtext"
	"github.com/agents-sandbox/asb/runner"
	"github.com/agents-sandbox/asb/schema"
)

// Explain writes what a user needs to decide on a folder that does not
// run (a folder the policy refuses is an error: nothing to decide): what
// it would grant, as asb boundary shows
// it; what widened and narrowed since the version this user approved
// (from the grants kept with that approval); and the files that differ
// from it, each labelled rendered by asb, edited or added, with a diff
// only for content that is not asb's render.
func (v *Verdict) Explain(ctx context.Context, w io.Writer, git runner.Git) error {
	if len(v.Refused) > 0 {
		return &PolicyRefusedError{Dir: v.Dir, Problems: v.Refused} // no approval changes that
	}
	f, err := Open(v.Dir, Options{Getenv: v.judge.Getenv, Agents: v.judge.agents()})
	if err != nil {
		return err
	}
	g := GrantsOf(f)
	fmt.Fprintln(w, "What it would grant the agent (asb boundary shows it in full):")
	g.Print(w)
	fmt.Fprintln(w)
	if v.Last == nil {
		fmt.Fprintln(w, "Nothing of this folder is approved on this machine yet: read the above, and the files below.")
	} else {
		v.printChanges(w, g)
	}
	return v.printFiles(ctx, w, git, f.SecretValues())
}

// Print writes the grants, one line per kind.
func (g *Grants) Print(w io.Writer) {
	line := func(kind string, items []string) {
		if len(items) == 0 || len(items) == 1 && items[0] == "" {
			items = []string{"none"}
		}
		fmt.Fprintf(w, "  %-9s %s\n", kind, items[0])
		for _, it := range items[1:] {
			fmt.Fprintf(w, "  %-9s %s\n", "", it)
		}
	}
	nw := modeName(g.Network) + ": " + modeWhat(g.Network)
	if g.Network == "allow" {
		nw = "allow list: " + strings.Join(g.Allow, ", ")
	}
	if len(g.Deny) > 0 {
		nw += "; denied: " + strings.Join(g.Deny, ", ")
	}
	line("network", []string{nw})
	var secs []string
	for _, s := range g.Secrets {
		secs = append(secs, fmt.Sprintf("%s → %s (in %s)", s.Name, strings.Join(s.Hosts, ", "), s.In))
	}
	line("secrets", secs)
	var mounts []string
	for _, m := range g.Mounts {
		note := ""
		if m.Outside {
			note = "  OUTSIDE THIS FOLDER"
		}
		mounts = append(mounts, fmt.Sprintf("%s ← %s (%s)%s", m.Guest, m.Source, m.Access, note))
	}
	line("mounts", mounts)
	line("ports", g.Ports)
	line("images", []string{strings.Join(g.Images, ", ")})
	line("agents", []string{strings.Join(g.Agents, ", ")})
	var limits []string
	for _, n := range limitOrder() {
		if v := g.Limits[n]; v != "" {
			limits = append(limits, n+" "+v)
		}
	}
	line("limits", []string{strings.Join(limits, ", ")})
	if g.Origin != "" {
		line("origin", []string{g.Origin})
	}
	if len(g.Settings) > 0 {
		line("settings", g.Settings)
	}
}

// printChanges writes what widened (highlighted) and what narrowed since
// the latest approval.
func (v *Verdict) printChanges(w io.Writer, g *Grants) {
	fmt.Fprintf(w, "Since you approved it (%s, %s):\n", v.Last.At.Local().Format("2006-01-02 15:04"), v.Last.How)
	if v.Last.Grants == nil {
		fmt.Fprintln(w, "  (that approval kept no boundary to compare with)")
		return
	}
	changes := g.Compare(v.Last.Grants)
	if len(changes) == 0 {
		fmt.Fprintln(w, "  the boundary is the one you approved; the files that changed are below")
	}
	for _, c := range changes {
		if c.Widens {
			fmt.Fprint(w, "  ")
			_ = termtext.Fprint(w, termtext.Alarm, "WIDENED   "+c.What)
			fmt.Fprintln(w)
		} else {
			fmt.Fprintf(w, "  narrowed  %s\n", c.What)
		}
	}
	fmt.Fprintln(w)
}

// fileLabel says what a file of the set is, against asb's render.
func (v *Verdict) fileLabel(n string, tracked *folderfs.Tracked) (label string, diff bool) {
	ours, inSet := v.Set.Files[n]
	var theirs []byte
	inRender := false
	if v.Render != nil {
		theirs, inRender = v.Render.Files[n]
	}
	switch {
	case n == AnswersFile:
		return "changed: the answers and workspace origin (what they grant is above)", false
	case !inSet:
		return "removed", false
	case inRender && bytes.Equal(ours, theirs):
		return "rendered by asb from the answers", false
	case inRender:
		return "edited (differs from asb's render; diff below)", true
	case !strings.Contains(n, "/") && tracked != nil && !tracked.TopTracked(n):
		return "added, not tracked by git (diff below; a scratch file nothing reads stays out of the set when .gitignore lists it)", true
	}
	return "added (asb renders no such file; diff below)", true
}

// printFiles lists the files that differ from the approved version (or,
// with none, from asb's render), then the diffs of those that are not
// asb's render, with every secret value (hide) masked: a copy of
// secrets.env beside it (an editor's secrets.env~) is a file of the set.
func (v *Verdict) printFiles(ctx context.Context, w io.Writer, git runner.Git, hide []string) error {
	var approved map[string]string
	if v.Last != nil {
		approved = v.Last.Files
	}
	render := v.Render
	if render == nil {
		render = &TrustSet{Files: map[string][]byte{}}
	}
	tracked, _ := folderfs.ReadTracked(v.Dir)
	if v.Set.untracked != "" {
		tracked = nil // no record: nothing stays out as untracked
	}
	type entry struct {
		name, label string
		diff        bool
	}
	var list []entry
	names := v.Set.namesWith(render)
	for n := range approved {
		if _, ok := v.Set.Files[n]; !ok && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for _, n := range names {
		ours, inSet := v.Set.Files[n]
		if approved != nil {
			if inSet && approved[n] == digest(ours) || !inSet && approved[n] == "" {
				continue // as approved
			}
		} else if inSet && bytes.Equal(ours, render.Files[n]) || !inSet {
			continue
		}
		label, diff := v.fileLabel(n, tracked)
		list = append(list, entry{n, label, diff})
	}
	if len(list) == 0 {
		return nil
	}
	what := "asb's render of the answers"
	if approved != nil {
		what = "the version you approved"
	}
	fmt.Fprintf(w, "Files that differ from %s:\n", what)
	if v.Set.untracked != "" {
		fmt.Fprintf(w, "  (asb cannot know what git tracks here: %s; so every file below the top counts, not only what a clone brings)\n", v.Set.untracked)
	}
	for _, e := range list {
		fmt.Fprintf(w, "  %-20s %s\n", e.name, e.label)
	}
	for _, e := range list {
		if !e.diff {
			continue
		}
		printDiff(ctx, w, git, e.name, MaskSecrets(render.Files[e.name], hide), MaskSecrets(v.Set.Files[e.name], hide))
	}
	return nil
}

// printDiff prints the diff of name from asb's render (theirs) to the
// folder's (ours); without git (a minimal machine), the file's sizes and why.
func printDiff(ctx context.Context, w io.Writer, git runner.Git, name string, theirs, ours []byte) {
	d, err := git.Diff(ctx, name, theirs, ours)
	if err == nil {
		fmt.Fprint(w, d)
		return
	}
	why := err.Error()
	if errors.Is(err, exec.ErrNotFound) {
		why = "git is not installed"
	}
	fmt.Fprintf(w, "%s differs from asb's render (%d bytes against %d; no diff: %s)\n", name, len(ours), len(theirs), why)
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// PolicyFilesLine says which policy files are in force, for doctor and
// boundary.
func PolicyFilesLine(p *schema.Policy, machine, user string) string {
	if p.Empty() {
		return fmt.Sprintf("none (asb reads %s and %s; neither exists)", orNone(machine), orNone(user))
	}
	var parts []string
	for _, l := range p.Layers {
		who := "yours"
		if l.Machine {
			who = "this machine's"
		}
		parts = append(parts, l.Path+" ("+who+")")
	}
	return strings.Join(parts, ", ")
}
