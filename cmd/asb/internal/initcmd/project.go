package initcmd

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/runner"
)

// A folder may be made an outer folder when it is new, empty, an outer
// folder already, or a repository that holds nothing but what a new
// repository holds. A project's own files belong in workspace/: init does
// not build the outer folder around them (the VM would be made of the
// project's folder, and the project's history would become the outer
// folder's).

// besides are the top-level names a folder may hold beside the plan's.
var besides = []string{".git", ".asb", ".task", ".DS_Store", ".gitattributes", "LICENSE", "LICENSE.md", "LICENSE.txt", "README", "README.md"}

// heldProject says what project dir holds ("" when it holds none).
func heldProject(ctx context.Context, git runner.Git, dir string, plan *generator.Plan) string {
	ours := map[string]bool{}
	for _, f := range plan.Files {
		ours[strings.Split(f.Path, "/")[0]] = true
	}
	isOurs := func(name string) bool {
		return ours[name] || slices.Contains(besides, name) || strings.HasSuffix(name, ".orig")
	}
	var found []string
	if entries, err := os.ReadDir(dir); err == nil {
		for _, e := range entries {
			if !isOurs(e.Name()) {
				n := e.Name()
				if e.IsDir() {
					n += "/"
				}
				found = append(found, n)
			}
		}
	}
	history := false
	for _, name := range git.TrackedFiles(ctx, dir) {
		if !isOurs(path.Clean(name)) {
			history = true
			if !slices.Contains(found, name) && !slices.Contains(found, name+"/") {
				found = append(found, name)
			}
		}
	}
	if len(found) == 0 {
		return ""
	}
	what := strings.Join(found[:min(4, len(found))], ", ")
	if len(found) > 4 {
		what += fmt.Sprintf(" and %d more", len(found)-4)
	}
	if history {
		what += ", in its own git history"
	}
	return what
}

func projectError(o *Options, dir, what string) error {
	rel := o.displayDir()
	sibling := filepath.Base(dir) + "-sandbox"
	return fmt.Errorf("%s already holds a project (%s): an outer folder keeps the project in its workspace/, beside the files the VM is made of, and asb does not build one around it; "+
		"lay the outer folder down beside it, with the project cloned into it: asb init --agent %s --workspace %s %s",
		rel, what, o.Init.Agent, rel, filepath.Join(filepath.Dir(rel), sibling))
}
