package runner

import (
	"testing"
	"unicode/utf8"
)

// A long line of msb's log is cut at a character's start, never inside one
// (the VM's kernel prints what it likes), and says it was cut.
func TestClipLine(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"shor", "shor"},
		{"abcdef", "abcd…"},
		{"abé", "abé"},
		{"abcédef", "abc…"}, // é is 2 bytes, at 3 and 4: a cut at 4 backs up to 3
	} {
		got := clipLine(c.in, 4)
		if got != c.want || !utf8.ValidString(got) {
			t.Errorf("clipLine(%q, 4) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := debugLine("  DEBUG virtiofs: lookup"); !got {
		t.Error("a DEBUG line was not taken for one")
	}
	if debugLine("INFO msb_krun_vmm::linux::vstate: Received KVM_EXIT_SHUTDOWN signal") || debugLine("[ 4.02] DEBUG in a kernel line") {
		t.Error("an INFO line or a kernel line was taken for a DEBUG one")
	}
}
