package runner

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/agents-sandbox/asb/internal/termtext"
)

// TestWarmAttachGetsTheRawTerminal: what a warm run prints itself (go-task's
// line naming the command, from the folder's Taskfile) goes through asb's
// printer, a control character shown visibly; the last command, attached
// (the agent's own interface), writes to the raw terminal under it, as the
// user gave it the terminal. The booted guest saw the agent's \r shown as
// ^M when the attach was handed the printer.
func TestWarmAttachGetsTheRawTerminal(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(dir+"/.asb", 0o755); err != nil {
		t.Fatal(err)
	}
	r := &WarmRecord{Key: WarmKey{Dir: dir}, Session: true, Cmds: []WarmStep{WarmStep{
		Task: "agent", Kind: "cmd", Dir: dir,
		Cmd: `env printf '\033[1mbold\r\n'`, Log: "task: [agent] printf '\x1b[1m'",
	}.Judged()}}
	var raw, rawErr bytes.Buffer
	out, errOut := termtext.New(&raw), termtext.New(&rawErr)
	io := WarmIO{In: strings.NewReader(""), Out: out, Err: errOut, TermOut: &raw, TermErr: &rawErr}
	if err := RunWarm(context.Background(), r, io); err != nil {
		t.Fatal(err)
	}
	if got := raw.String(); got != "\x1b[1mbold\r\n" {
		t.Errorf("the attached command's output = %q, want it as it wrote it", got)
	}
	if got := rawErr.String(); strings.Contains(got, "\x1b") || !strings.Contains(got, "^[") {
		t.Errorf("asb's own line reached the terminal raw: %q", got)
	}
}

// TestWarmAttachNotInteractiveIsPrinted: the last command of a task that is
// not interactive (asb task logs, vm:exec: what the VM wrote, no terminal
// of its own) is shown through asb's printer, as the engine's run shows it.
func TestWarmAttachNotInteractiveIsPrinted(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(dir+"/.asb", 0o755); err != nil {
		t.Fatal(err)
	}
	r := &WarmRecord{Key: WarmKey{Dir: dir}, Cmds: []WarmStep{WarmStep{
		Task: "logs", Kind: "cmd", Dir: dir, Cmd: `env printf '\033]52;c;aGk=\007\n'`,
	}.Judged()}}
	var raw, rawErr bytes.Buffer
	out, errOut := termtext.New(&raw), termtext.New(&rawErr)
	io := WarmIO{In: strings.NewReader(""), Out: out, Err: errOut, TermOut: &raw, TermErr: &rawErr}
	if err := RunWarm(context.Background(), r, io); err != nil {
		t.Fatal(err)
	}
	if got := raw.String(); got != "^[]52;c;aGk=^G\n" {
		t.Errorf("the command's output = %q, want it shown visibly", got)
	}
}
