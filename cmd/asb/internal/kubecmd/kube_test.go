package kubecmd

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/runner"
)

// osc52 is what an agent's interface (or a hostile one) prints: a colour,
// then OSC 52, which writes the terminal's clipboard.
const osc52 = "\x1b[1mA\x1b]52;c;aGk=\x07"

// exporter is a stand-in asb-export that prints osc52, as the agent in
// the pod would on its terminal.
func exporter(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "asb-export")
	if err := os.WriteFile(p, []byte("#!/bin/sh\nprintf '\\033[1mA\\033]52;c;aGk=\\007'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func run(t *testing.T, in *os.File) string {
	t.Helper()
	exe := exporter(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "sandbox.yaml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	io := cmdutil.Printing(&cmdutil.IOStreams{In: in, Out: &out, ErrOut: &errOut})
	f := &cmdutil.Factory{IO: io, Getwd: func() (string, error) { return dir, nil },
		Getenv: func(k string) string {
			if k == runner.ExportEnv {
				return exe
			}
			return ""
		}}
	if err := Run(t.Context(), &Options{Factory: f}); err != nil {
		t.Fatalf("asb kube agent: %v (stderr %q)", err, errOut.String())
	}
	io.Flush()
	return out.String()
}

// On a terminal the agent is attached to it as asb task agent attaches
// msb exec -t: its interface's escape sequences reach the terminal.
func TestKubeAgentOnATerminalIsRaw(t *testing.T) {
	if got := run(t, openPTY(t)); got != osc52 {
		t.Errorf("asb kube agent on a terminal printed %q, want the agent's bytes %q", got, osc52)
	}
}

// Not on a terminal (a pipe, a file, CI's /dev/null), the agent's output
// goes through asb's printer, as every command's does.
func TestKubeAgentOffATerminalIsPrinted(t *testing.T) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	got := run(t, null)
	if strings.ContainsRune(got, 0x1b) || !strings.Contains(got, "^[]52;c;aGk=^G") {
		t.Errorf("asb kube agent without a terminal printed %q, want its control characters shown (^[]52…^G)", got)
	}
}

// openPTY opens a new pseudo-terminal and returns its terminal side.
func openPTY(t *testing.T) *os.File {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, ptmx.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatalf("unlock the pseudo-terminal: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, ptmx.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatalf("number of the pseudo-terminal: %v", e)
	}
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tty.Close() })
	return tty
}
