package runner

import (
	"bytes"
	"testing"

	"github.com/agents-sandbox/asb/host"
)

// TestAnswerWatch: msb's answers are held back and kept, written in one
// piece or byte by byte, coloured at a terminal or not; anything else is
// shown as it comes, the bytes held for a while included.
func TestAnswerWatch(t *testing.T) {
	answers := []string{host.MSBNotFound("vm1"), host.MSBFailedStart("vm1"), host.MSBNotStartable("vm1")}
	for _, c := range []struct {
		in      string
		matched bool
	}{
		{"error: sandbox not found: vm1\n", true},
		{"\x1b[31m\x1b[1merror:\x1b[0m sandbox 'vm1' is in state Starting and cannot be started\n", true},
		{"error: failed to start \"vm1\"\n  → other: sandbox process exited (signal: 6 (SIGABRT)) before agent relay became available\n", true},
		{"error: sandbox not found: vm12\n", false},
		{"error: something else\n", false},
		{"hello\n", false},
		{"\x1b[2Jerror: sandbox not found: vm1\n", false},
		{"", false},
	} {
		for _, step := range []int{1, 3, 1000} {
			var out bytes.Buffer
			w := &answerWatch{w: &out, answers: answers, held: true}
			for i := 0; i < len(c.in); i += step {
				_, _ = w.Write([]byte(c.in[i:min(i+step, len(c.in))]))
			}
			if !w.matched {
				_ = w.flush()
			}
			if w.matched != c.matched {
				t.Errorf("%q in writes of %d: matched %v, want %v", c.in, step, w.matched, c.matched)
			}
			if want := map[bool]string{true: "", false: c.in}[c.matched]; out.String() != want {
				t.Errorf("%q in writes of %d: shown %q, want %q", c.in, step, out.String(), want)
			}
		}
	}
}
