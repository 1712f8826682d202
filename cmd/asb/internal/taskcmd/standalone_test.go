package taskcmd_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/testkit/testenv"
)

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// TestRealStandaloneTaskListsAndDryRuns checks that the generated Taskfile
// is an ordinary Taskfile: the go-task binary of the version asb embeds
// lists it and dry-runs agent with the Taskfile's own default names.
func TestRealStandaloneTaskListsAndDryRuns(t *testing.T) {
	if testenv.Skipped() {
		t.Skip("real-tool tests are off (" + testenv.EnvSkip + "=1)")
	}
	bin := filepath.Join(os.Getenv(testenv.EnvToolsDir), "bin", "task")
	if _, err := os.Stat(bin); err != nil || os.Getenv(testenv.EnvToolsDir) == "" {
		testenv.Unavailable(t, "the standalone task binary is not in $ASB_TOOLS_DIR/bin", "run make tools")
		return
	}
	s := newSandbox(t, generator.DefaultOptions("opencode", "demo"))
	run := func(args ...string) string {
		cmd := exec.Command(bin, args...)
		cmd.Dir = s.dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("task %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		// go-task colours its output when it sees CI=true; drop the escapes.
		return ansi.ReplaceAllString(string(out), "")
	}
	if v := run("--version"); !strings.Contains(v, "3.54.0") {
		t.Fatalf("task --version = %q, want the version asb embeds (3.54.0)", v)
	}
	list := run("--list")
	for _, name := range []string{"agent", "image:build", "image:load", "vm:create", "vm:start", "vm:shell", "vm:exec", "home:reset"} {
		if !strings.Contains(list, "* "+name+":") {
			t.Errorf("task --list lacks %s:\n%s", name, list)
		}
	}
	dry := run("--dry", "agent", "--", "--model", "x")
	for _, want := range []string{"msb create demo:opencode-latest --name demo-opencode", "msb exec -t -u dev -w /workspace demo-opencode -- opencode --model x"} {
		if !strings.Contains(dry, want) {
			t.Errorf("task --dry agent lacks %q:\n%s", want, dry)
		}
	}
	if calls, _ := os.ReadFile(filepath.Join(s.state, "calls.log")); len(calls) > 0 {
		t.Logf("standalone task --dry ran its status checks (go-task does): %s", calls)
	}
}
