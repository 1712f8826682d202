package testenv

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// MSBRecordRace is how msb's create says that its own database refused the
// VM's first run record, the VM's own row gone under it ("config: insert
// run: … FOREIGN KEY constraint failed"): msb's, seen when VMs of one
// MSB_HOME are made, killed and removed a fraction of a second apart
// (TestRealEgressAgreesWithMsb: CI run 23, and ci2 of 2026-12-06), and
// beside a busy loop on each core (ci49, ci54). StartPolling makes such a
// create once more; docs/testing.md's table.
const MSBRecordRace = "FOREIGN KEY constraint failed"

// StartPolling starts a create (start(false)) and returns it with msb's
// record of vm, read while the create is in flight (TryPollRecord). A
// create that msb's own database refused (MSBRecordRace, in what it said)
// is made once more, start(true), after msb removes what it left (the
// caller's second create may replace what msb kept of the first: msb
// answered "sandbox already exists" after a refused create in ci7 of
// 2026-12-06). Any other end without a record, or a second refusal, is an
// error that quotes the create: its command, exit code and output.
func StartPolling(t testing.TB, ctx context.Context, msb string, env []string, vm string, start func(retry bool) *Proc) (*Proc, []byte, error) {
	t.Helper()
	for retry := false; ; retry = true {
		create := start(retry)
		raw, err := TryPollRecord(ctx, msb, env, vm, create.Done())
		if err == nil {
			return create, raw, nil
		}
		stderr, err := createEnded(err, create)
		if retry || !strings.Contains(stderr, MSBRecordRace) {
			return nil, nil, err
		}
		t.Logf("retried under msb's own failure (its database refused the VM's record, %q): %v", MSBRecordRace, err)
		_, _, _ = RunErr(ctx, "", env, nil, msb, "remove", "--force", "--quiet", vm)
	}
}

// PollRecord is TryPollRecord of a create the caller started: it fails
// the test when ctx ends first or when create ends without a record,
// quoting what create said (ci49 of 2026-12-06 failed here with only msb
// inspect's answer).
func PollRecord(t testing.TB, ctx context.Context, msb string, env []string, vm string, create *Proc) []byte {
	t.Helper()
	out, err := TryPollRecord(ctx, msb, env, vm, create.Done())
	if err != nil {
		_, err = createEnded(err, create)
		t.Fatal(err)
	}
	return out
}

// createEnded returns create's standard error, and err (why there is no
// record) with what create said, waited for at most 5 s more (exit -1: it
// still runs).
func createEnded(err error, create *Proc) (stderr string, quoted error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	stdout, stderr, code := create.Wait(ctx)
	return stderr, fmt.Errorf("%w\nthe create (%s) ended with exit %d:\n%s%s", err, strings.Join(create.cmd.Args, " "), code, stdout, stderr)
}

// TryPollRecord runs `msb inspect VM --format json` every 100 ms until msb
// has a record of vm (while a create is in flight msb shows it Starting,
// with the whole resolved config), and returns it; an error when ctx ends
// first, or when stop is closed (the create ended) and one last look
// finds none.
func TryPollRecord(ctx context.Context, msb string, env []string, vm string, stop <-chan struct{}) ([]byte, error) {
	for {
		out, _, err := RunErr(ctx, "", env, nil, msb, "inspect", vm, "--format", "json")
		if err == nil {
			return out, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("msb never recorded %s: %w", vm, ctx.Err())
		case <-stop:
			// One last look: a failed create leaves a Stopped record.
			out, errOut, err := RunErr(context.Background(), "", env, nil, msb, "inspect", vm, "--format", "json")
			if err == nil {
				return out, nil
			}
			// What msb answered says why (CI run 23 failed here once with no
			// word of it).
			return nil, fmt.Errorf("the create ended, and msb has no record of %s: msb inspect: %w\n%s%s", vm, err, out, errOut)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
