package taskcmd

import (
	"bufio"
	"context"
	"fmt"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/runner"
)

// gate refuses an outer folder whose content its user has not approved
// (outer.CheckTrust): none of it runs, no task, no image build, no msb
// create. The diff against asb's render is shown; at a terminal asb asks,
// elsewhere it never approves (--yes does not either: it answers the tasks'
// questions, not this one).
func gate(ctx context.Context, o *Options, dir string) error {
	v, err := checkTrust(o, dir)
	if err == nil && !v.Trusted && cmdutil.CleanStaleStaging(dir, o.IO.ErrOut) > 0 {
		v, err = checkTrust(o, dir) // a killed write's staging file was in it
	}
	if err != nil {
		return fmt.Errorf("refused: %w", err)
	}
	if v.Trusted {
		return nil
	}
	w := o.IO.ErrOut
	fmt.Fprintf(w, "asb: %s is not approved to run: %s. What it would run, against asb's render:\n\n", dir, v.Why)
	if err := v.PrintDiff(ctx, w, runner.Git{}); err != nil {
		return err
	}
	if o.IsTerminal != nil && o.IsTerminal() {
		yes, _ := cmdutil.Confirm(bufio.NewReader(o.IO.In), w, "\nApprove this content of the folder and run it? [y/N] ")
		if yes {
			return v.Store.Approve(dir, v.Set.Hash())
		}
	}
	return &outer.NotTrustedError{Dir: dir, Why: v.Why}
}

// checkTrust is asb task's one trust check, on every run, the warm one
// included (a cached verdict keyed by the files' identities replaces it).
func checkTrust(o *Options, dir string) (*outer.Verdict, error) {
	return outer.CheckTrust(dir, o.Templates, o.Getenv)
}
