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
	asked := o.IsTerminal != nil && o.IsTerminal()
	return cmdutil.Gate(ctx, o.IO, o.judge(), dir, asked, true)
}

func (o *Options) judge() outer.Judge {
	return outer.Judge{Templates: o.Templates, Getenv: o.Getenv, MachinePolicy: o.MachinePolicy}
}
