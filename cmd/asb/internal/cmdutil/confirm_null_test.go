package cmdutil

import (
	"os"
	"testing"
)

// /dev/null is a character device, not a terminal: nothing answers there.
func TestIsTerminalDevNull(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) {
		t.Error("IsTerminal(/dev/null) = true")
	}
}
