package networkcmd

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/internal/testkit/fakes"
	"github.com/agents-sandbox/asb/internal/testkit/testenv"
)

// TestMain lets the test binary be the stand-in msb (linked as bin/msb),
// and gives it a state and temporary folder of its own (testenv.PrivateState).
func TestMain(m *testing.M) {
	fakes.Dispatch()
	clean := testenv.PrivateState()
	code := m.Run()
	clean()
	os.Exit(code)
}

// TestLogThroughMsb reads the log through the `msb` on PATH, the stand-in
// of internal/testkit/fakes: asb asks msb for the VM's record (its log
// level) and for the network engine's lines of its system log since
// --since, and a VM created without --log-level debug (as the stand-in's
// record says) gets the warning.
func TestLogThroughMsb(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	bin, state := filepath.Join(tmp, "bin"), filepath.Join(tmp, "state")
	if err := fakes.Link(self, bin); err != nil {
		t.Fatal(err)
	}
	fixture, err := filepath.Abs(filepath.Join("testdata", "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv(fakes.StateEnv, state)
	t.Setenv(fakes.LogsEnv, fixture)
	t.Setenv("MSB_HOME", filepath.Join(tmp, "msb"))
	dir, f, out, errOut := folder(t)
	vm, err := vmName(dir, f.Now())
	if err != nil {
		t.Fatal(err)
	}
	sh := "echo 'FAKE-IMAGE img:1 abc' | msb load --tag img:1 && msb create img:1 --name " + vm + " --conf sandbox.yaml"
	if b, err := exec.Command("sh", "-c", "cd "+dir+" && "+sh).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", sh, err, b)
	}
	if err := fakes.ResetCalls(state); err != nil {
		t.Fatal(err)
	}
	if err := runLog(context.Background(), &LogOptions{Factory: f, Since: 30 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	calls, err := fakes.Calls(state)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"msb inspect " + vm + " --format json",
		"msb logs " + vm + " --source system --json --grep microsandbox_network:: --since 2026-12-03T11:40:00Z"}
	if len(calls) != 2 || calls[0].String() != want[0] || calls[1].String() != want[1] {
		t.Errorf("msb calls %v; want %q", calls, want)
	}
	wantLines(t, "asb network log", squash(out.String()), " registry.npmjs.org 3 dns 2026-12-03T12:00:09Z\n")
	if strings.Contains(out.String(), "old.example.org") || strings.Contains(out.String(), "printed.example.org") {
		t.Errorf("printed a line from before --since or of the agent's output:\n%s", out)
	}
	wantLines(t, "stderr", errOut.String(), "asb: warning: "+vm+" runs at msb's log level info (the default)")
}
