package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/internal/testkit/fakes"
)

// startAndPoll's second create, after one msb's own database refused,
// replaces what msb kept of the first: the stand-in refuses a second
// create without --replace, as msb did in ci7 of 2026-12-06 ("sandbox
// already exists"). (testenv.StartPolling's own test has the rest.)
func TestStartAndPollReplacesOnItsRetry(t *testing.T) {
	data := t.TempDir()
	m, err := fakes.NewRaceMSB(data, []string{"race", "ok"}, true)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, raw, err := startAndPoll(t, ctx, data, m.Env, m.Bin, "vm", []string{m.Bin, "create", "img", "--name", "vm"})
	if err != nil {
		t.Fatal(err)
	}
	_ = p.Kill()
	if !strings.Contains(string(raw), "Starting") || m.Creates() != 2 {
		t.Errorf("got %q after %d creates; want the second create's record", raw, m.Creates())
	}
}
