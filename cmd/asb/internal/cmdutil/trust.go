package cmdutil

import (
	"bufio"
	"context"
	"fmt"

	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/runner"
)

// Gate refuses an outer folder that its user has not approved, or that
// asks for what the policy forbids (outer.Judge): asb task and asb sync
// run nothing of it, and call nothing (no task, no image build, no msb,
// no clone). With cached, the verdict is the cached one when nothing it
// was made from changed (a few stats: outer.CheckTrustCached). A refusal
// shows what the folder would grant and what widened since the approved
// version; at a terminal (asked) asb asks once, elsewhere it never
// approves (--yes does not either: it answers the tasks' questions, not
// this one) and names the asb trust command.
func Gate(ctx context.Context, io *IOStreams, j outer.Judge, dir string, asked, cached bool) error {
	check := j.Check
	if cached {
		check = func(dir string) (*outer.Verdict, error) { return outer.CheckTrustCached(dir, j) }
	}
	v, err := check(dir)
	if err != nil {
		return fmt.Errorf("refused: %w", err)
	}
	if v.Trusted {
		return nil
	}
	if len(v.Refused) > 0 {
		return &outer.PolicyRefusedError{Dir: dir, Problems: v.Refused}
	}
	w := io.ErrOut
	fmt.Fprintf(w, "asb: %s is not approved to run: %s.\n\n", dir, v.Why)
	if err := v.Explain(ctx, w, runner.Git{}); err != nil {
		return err
	}
	if asked {
		yes, _ := Confirm(bufio.NewReader(io.In), w, "\nApprove this folder as it is, and go on? [y/N] ")
		if yes {
			return v.Approve("asked at the terminal")
		}
	}
	return &outer.NotTrustedError{Dir: dir, Why: v.Why}
}
