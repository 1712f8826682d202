package initcmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/schema"
)

func report(w io.Writer, changes []generator.Change, dry bool) {
	verb := map[generator.Action]string{
		generator.Create: "create", generator.Unchanged: "unchanged", generator.Update: "update",
		generator.Kept: "kept", generator.Overwrite: "overwrite", generator.Conflict: "conflict",
	}
	if dry {
		verb[generator.Create] = "would create"
		verb[generator.Update] = "would update"
		verb[generator.Overwrite] = "would overwrite"
	}
	var bases []generator.Change
	for _, c := range changes {
		if c.Path == schema.BaseDir || strings.HasPrefix(c.Path, schema.BaseDir+"/") {
			bases = append(bases, c) // the merge bases: one line below, unless something is wrong
			if c.Action != generator.Conflict {
				continue
			}
		}
		name := c.Path
		if c.Dir && !strings.HasSuffix(name, "/") {
			name += "/"
		}
		line := fmt.Sprintf("%-15s %04o  %s", verb[c.Action], c.Mode.Perm(), name)
		if c.Why != "" {
			line += "  (" + c.Why + ")"
		}
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
	if n := countFiles(bases); n > 0 {
		fmt.Fprintf(w, "%-15s       %s/  (the bytes asb wrote, %d files: what asb update merges against)\n", baseVerb(bases, verb), schema.BaseDir, n)
	}
}

func countFiles(cs []generator.Change) int {
	n := 0
	for _, c := range cs {
		if !c.Dir {
			n++
		}
	}
	return n
}

// baseVerb sums up what happened to the merge bases: the strongest action.
func baseVerb(cs []generator.Change, verb map[generator.Action]string) string {
	for _, a := range []generator.Action{generator.Conflict, generator.Overwrite, generator.Update, generator.Create, generator.Kept} {
		for _, c := range cs {
			if c.Action == a && !c.Dir {
				return verb[a]
			}
		}
	}
	return verb[generator.Unchanged]
}

func nextSteps(w io.Writer, o *Options, plan *generator.Plan, res *written) {
	changes := res.changes
	// secrets.env and a .gitignore kept are the user's always: --force
	// overwrites neither, so they are not counted.
	kept := len(editedFiles(plan, changes))
	if len(res.cleaned) > 0 {
		fmt.Fprintf(w, "\nRemoved %d staging file(s) an interrupted run had left: %s\n", len(res.cleaned), strings.Join(res.cleaned, ", "))
	}
	for _, c := range changes {
		if c.Path == ".gitignore" && c.Content != nil {
			fmt.Fprintf(w, "\nYour .gitignore was missing lines the outer folder needs (secrets.env holds credentials); they were appended to it.\n")
		}
	}
	if kept > 0 {
		fmt.Fprintf(w, "\n%d file(s) you edited were kept; --force overwrites them (keeping .orig copies).\n", kept)
	}
	workspaceReport(w, o, res.origin)
	rel := o.displayDir()
	fmt.Fprintf(w, "\nNext:\n")
	if rel != "." {
		fmt.Fprintf(w, "  cd %s\n", generator.ShellQuote(rel))
	}
	fmt.Fprintf(w, "  $EDITOR secrets.env      # set the agent's key (or export it)\n")
	fmt.Fprintf(w, "  asb validate             # check the boundary\n")
	fmt.Fprintf(w, "  asb task agent           # build, create and start the VM, attach the agent\n")
}

// workspaceReport says what workspace/ was made from a local --workspace
// and what the record gives teammates.
func workspaceReport(w io.Writer, o *Options, origin *schema.WorkspaceOrigin) {
	if origin == nil {
		return
	}
	src := o.Init.Workspace
	switch {
	case origin.URL != "":
		fmt.Fprintf(w, "\nworkspace/ is a clone of %s (%s); asb.yaml records its remote %s for teammates (asb sync clones it), never the local path.\n",
			src, branchAt(origin), origin.URL)
	case origin.Local == schema.LocalCheckout:
		fmt.Fprintf(w, "\nworkspace/ is a clone of %s (%s). It has no remote a teammate can clone, so asb.yaml records it as local, not shared: it works for you, and a teammate's asb sync leaves workspace/ empty.\n  %s\n",
			src, branchAt(origin), schema.LocalShareFix(o.Init.Agent))
	case origin.Local == schema.LocalFolder:
		fmt.Fprintf(w, "\nworkspace/ is a copy of %s, which is not a git checkout, so asb.yaml records it as local, not shared: a teammate's asb sync leaves workspace/ empty. asb session new needs a repository: git -C workspace init, then commit.\n",
			src)
	}
}

func branchAt(o *schema.WorkspaceOrigin) string {
	at := o.Branch
	if at == "" {
		at = "detached HEAD"
	}
	if len(o.Commit) >= 12 {
		at += " at " + o.Commit[:12]
	}
	return at
}
