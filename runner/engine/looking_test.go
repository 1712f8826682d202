package engine

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agents-sandbox/asb/runner"
)

// TestLookingAsksNoNameServer: once a looking run has set up, a name
// lookup (what a template's getHostByName does) reaches no name server,
// whichever template function makes it.
func TestLookingAsksNoNameServer(t *testing.T) {
	saved := net.DefaultResolver
	t.Cleanup(func() { net.DefaultResolver = saved })
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, runner.TaskfileName), []byte("version: '3'\ntasks:\n  a:\n    cmds: [echo a]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, flush, err := lookingIO(runner.EngineSpec{Dir: dir, List: true}, Stdio{Out: io.Discard, Err: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	flush()
	_, err = net.LookupHost("asb-looking-test.example.com")
	if err == nil || !strings.Contains(err.Error(), errNoNameServer.Error()) {
		t.Fatalf("a lookup in a looking run: %v; want %q", err, errNoNameServer)
	}
}
