package taskcmd_test

import (
	"testing"
	"time"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/outer"
)

// TestWarmGateReadsNoTrustSet: the trust gate of a warm asb task agent is
// the cached verdict when nothing it was made from changed, which opens
// no file of the trust set (outer.TrustReads counts them): stats only.
func TestWarmGateReadsNoTrustSet(t *testing.T) {
	s := newSandbox(t, generator.DefaultOptions("opencode", "demo"))
	mustRun(t, s, "task", "agent") // cold: the image build writes toolchain/certs
	for range 2 {
		// Past the window in which a file just written cannot be told by
		// its stamp, so the verdict is kept.
		time.Sleep(200 * time.Millisecond)
		mustRun(t, s, "task", "agent")
	}
	before := outer.TrustReads()
	mustRun(t, s, "task", "agent")
	if n := outer.TrustReads() - before; n != 0 {
		t.Errorf("a warm asb task agent read %d files of the trust set; want none (the cached verdict)", n)
	}
}
