package taskcmd

import (
	"fmt"
	"sync"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/runner"
	"github.com/agents-sandbox/asb/schema"
)

// startReview, before a warm run's agent starts, records the tree its VM
// writes (workspace/ or the session's checkout) as reviewed when it has no
// record yet, and returns what lists, once the agent returned, the files
// of that tree that tools on the host run or obey and that changed
// (outer.ReviewHostRun). The engine does the same on its path.
func startReview(o *Options, spec runner.EngineSpec) (after func()) {
	table := sync.OnceValues(func() (schema.HostRunTable, error) {
		if o.Templates == nil {
			return nil, fmt.Errorf("no templates")
		}
		return generator.HostRunTable(o.Templates)
	})
	session := spec.Vars["SESSION"]
	if err := outer.ReviewBaseline(spec.Dir, session, table); err != nil {
		fmt.Fprintf(o.IO.ErrOut, "asb: warning: the files host tools run could not be recorded for review: %v\n", err)
	}
	// The table of asb's own presets is Go (schema.OwnHostRunTable): made
	// when it is needed, after the agent returned, for less than a
	// goroutine started beside the agent would cost.
	return func() {
		t, err := table()
		if err == nil {
			_, err = outer.ReviewHostRun(spec.Dir, session, t, o.IO.ErrOut)
		}
		if err != nil {
			fmt.Fprintf(o.IO.ErrOut, "asb: warning: the files host tools run could not be reviewed: %v\n", err)
		}
	}
}
