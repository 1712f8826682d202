package outer

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/agents-sandbox/asb/runner"
	"github.com/agents-sandbox/asb/schema"
)

// FetchReport is what asb fetch brought into the host repository.
type FetchReport struct {
	Remote   string        `json:"remote"` // the host repository: what a checkout adds as a remote
	Refs     []FetchedRef  `json:"refs"`
	HostRun  []HostRunFile `json:"host_run"`
	Problems []string      `json:"problems,omitempty"`
}

// FetchedRef is a branch of the host repository that changed.
type FetchedRef struct {
	Branch  string `json:"branch"` // as the host repository names it: workspace/main, fix-login
	Old     string `json:"old,omitempty"`
	New     string `json:"new,omitempty"` // "": removed (the VM deleted it)
	Commits int    `json:"commits"`       // commits of New that Old lacks
}

// HostRunFile is a file that tools on the host run or obey, changed on a
// branch (schema.HostRun).
type HostRunFile struct {
	Branch string `json:"branch"`
	Path   string `json:"path"`
	Why    string `json:"why"`
}

// Fetch brings the commits of every repository the VM can write in the
// folder dir (workspace/ and each session's checkout) into its host
// repository, and says what arrived and which of the changed files tools
// on the host run or obey (table, matched at any depth). A repository that
// cannot be read is a Problem; the others are fetched.
func Fetch(ctx context.Context, dir string, git runner.Git, table schema.HostRunTable) (*FetchReport, error) {
	h, err := runner.OpenHostRepo(ctx, git, dir)
	if err != nil {
		return nil, err
	}
	rep := &FetchReport{Remote: h.Dir()}
	prevHead, _ := h.Commit(ctx, runner.WorkspaceHeadRef)
	if imp, err := importInto(ctx, h); err != nil {
		rep.Problems = append(rep.Problems, err.Error())
	} else {
		rep.add(ctx, h, table, imp.Updated, func(string) string { return prevHead })
	}
	sessions, err := Sessions(dir)
	if err != nil {
		rep.Problems = append(rep.Problems, err.Error())
	}
	for _, s := range sessions {
		imp, err := h.Import(ctx, SessionSource(s))
		if err != nil {
			rep.Problems = append(rep.Problems, fmt.Sprintf("session %s: %v", s.Name, err))
			continue
		}
		_, base := sessionRefs(s.Name)
		rep.add(ctx, h, table, imp.Updated, func(string) string { return base })
	}
	return rep, nil
}

// add reports the branches of updated, and the table's files each changed
// since its old commit (a new branch: since newBase(ref), "" for its whole
// tree).
func (rep *FetchReport) add(ctx context.Context, h *runner.HostRepo, table schema.HostRunTable, updated []runner.RefUpdate, newBase func(ref string) string) {
	for _, u := range updated {
		branch, ok := strings.CutPrefix(u.Ref, "refs/heads/")
		if !ok {
			continue // asb's own refs (HEAD, tags)
		}
		rep.Refs = append(rep.Refs, FetchedRef{Branch: branch, Old: u.Old, New: u.New, Commits: h.Count(ctx, u.Old, u.New)})
		if u.New == "" {
			continue
		}
		base := u.Old
		if base == "" {
			base = newBase(u.Ref)
		}
		files, err := h.ChangedFiles(ctx, base, u.New)
		if err != nil {
			rep.Problems = append(rep.Problems, fmt.Sprintf("%s: %v", branch, err))
			continue
		}
		for _, f := range files {
			if e, ok := table.Match(f, true); ok {
				rep.HostRun = append(rep.HostRun, HostRunFile{Branch: branch, Path: f, Why: e.Why})
			}
		}
	}
}

// Print writes the report for a person.
func (rep *FetchReport) Print(w io.Writer) {
	fmt.Fprintf(w, "Fetched into the host repository %s:\n", rep.Remote)
	if len(rep.Refs) == 0 {
		fmt.Fprintln(w, "  nothing new")
	}
	width := 0
	for _, r := range rep.Refs {
		width = max(width, len(r.Branch))
	}
	for _, r := range rep.Refs {
		what := fmt.Sprintf("%s..%s  %d new commit(s)", short(r.Old), short(r.New), r.Commits)
		switch {
		case r.New == "":
			what = "removed (the VM deleted the branch)"
		case r.Old == "":
			what = fmt.Sprintf("new branch at %s", short(r.New))
		}
		fmt.Fprintf(w, "  %-*s  %s\n", width, r.Branch, what)
	}
	if len(rep.HostRun) > 0 {
		fmt.Fprintln(w, "\nFiles that tools on your host run or obey, changed on these branches: look at them before you merge or run them (git diff, git show):")
		for _, f := range rep.HostRun {
			fmt.Fprintf(w, "  %s: %s  (%s)\n", f.Branch, f.Path, f.Why)
		}
	}
	fmt.Fprintf(w, "\nIn a checkout of your own (not workspace/, which is the VM's):\n")
	fmt.Fprintf(w, "  git remote add asb %s   # once\n", rep.Remote)
	fmt.Fprintf(w, "  git fetch asb && git log asb/BRANCH   # then merge it: git merge asb/BRANCH\n")
}
