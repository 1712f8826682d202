package engine

import (
	"fmt"
	"io"
	"sync"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/runner"
	"github.com/agents-sandbox/asb/schema"
	"github.com/agents-sandbox/asb/templates"
	"github.com/go-task/task/v3"
)

// startReview, when the run's last task is interactive (the agent, a shell
// in the VM: the VM runs what it wants in /workspace), records the tree
// that VM writes as reviewed when it has no record yet, and returns what
// lists on w, after the run, the files of that tree that tools on the host
// run or obey and that changed (outer.ReviewHostRun); a no-op otherwise.
// The warm path does the same (taskcmd).
func (t *Tasks) startReview(spec runner.EngineSpec, w io.Writer) (after func()) {
	if spec.Dry || len(spec.Tasks) == 0 {
		return func() {}
	}
	if _, interactive := t.deps(&task.Call{Task: spec.Tasks[len(spec.Tasks)-1]}); !interactive {
		return func() {}
	}
	table := sync.OnceValues(func() (schema.HostRunTable, error) { return generator.HostRunTable(templates.FS) })
	session := spec.Vars["SESSION"]
	if err := outer.ReviewBaseline(spec.Dir, session, table); err != nil {
		fmt.Fprintf(w, "asb: warning: the files host tools run could not be recorded for review: %v\n", err)
	}
	return func() {
		tb, err := table()
		if err == nil {
			_, err = outer.ReviewHostRun(spec.Dir, session, tb, w)
		}
		if err != nil {
			fmt.Fprintf(w, "asb: warning: the files host tools run could not be reviewed: %v\n", err)
		}
	}
}
