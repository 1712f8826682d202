package taskcmd

import (
	"context"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/outer"
)

// gate refuses an outer folder its user has not approved, or that the
// policy refuses (cmdutil.Gate), from the cached verdict when nothing it
// was made from changed: the warm path pays stats for it.
func gate(ctx context.Context, o *Options, dir string) error {
	j := o.judge()
	// The hot path: the cached verdict, a few stats (outer.CheckTrustCached).
	if v, err := outer.CheckTrustCached(dir, j); err == nil && v.Trusted {
		return nil
	}
	// Refused: a killed write's staging file may be what differs (it is in
	// the trust set). The walk for them is paid here, not on every run.
	cmdutil.CleanStaleStaging(dir, o.IO.ErrOut)
	asked := o.IsTerminal != nil && o.IsTerminal()
	return cmdutil.Gate(ctx, o.IO, j, dir, asked, true)
}

func (o *Options) judge() outer.Judge {
	return outer.Judge{Templates: o.Templates, Getenv: o.Getenv, MachinePolicy: o.MachinePolicy}
}
