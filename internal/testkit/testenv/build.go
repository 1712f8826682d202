package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// startHome is $HOME as the test binary started: tests set HOME to a temp
// folder, and go build must not get an empty build cache with it.
var startHome = os.Getenv("HOME")

// startDir is the folder the test binary started in (its package's, in the
// module): a test may chdir elsewhere before it needs a build.
var startDir, _ = os.Getwd()

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
	buildOut  []byte
)

// BuildAsb compiles asb and its go-task engine asb-task, as a user installs
// them (side by side), once per test binary, and returns asb's path.
func BuildAsb(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "asb-bin-")
		if buildErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", buildDir+string(filepath.Separator),
			"github.com/agents-sandbox/asb/cmd/asb", "github.com/agents-sandbox/asb/cmd/asb-task")
		cmd.Env = WithEnv(os.Environ(), "HOME="+startHome)
		buildOut, buildErr = cmd.CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("build asb and asb-task: %v\n%s", buildErr, buildOut)
	}
	return filepath.Join(buildDir, "asb")
}

// RemoveBuilds deletes what BuildAsb compiled (call it from TestMain).
func RemoveBuilds() {
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
}

var (
	scriptOnce sync.Once
	scriptDir  string
	scriptErr  error
)

// ScriptTools builds, once per test binary, what cmd/asb's scripts run,
// each a small program of its own: asb (cmd/asb/testdata/scriptasb: asb
// with the scripts' hooks), asb-task and asb-export as released, and fake,
// the stand-in msb, docker and podman (fakes.Link). It returns their
// folder, which a script puts first on its PATH (fake aside: only fakes
// DIR links it). RemoveScriptTools deletes it.
func ScriptTools() (string, error) {
	scriptOnce.Do(func() {
		scriptDir, scriptErr = os.MkdirTemp("", "asb-script-bin-")
		if scriptErr != nil {
			return
		}
		env := WithEnv(os.Environ(), "HOME="+startHome)
		for _, args := range [][]string{
			{"-o", filepath.Join(scriptDir, "asb"), "github.com/agents-sandbox/asb/cmd/asb/testdata/scriptasb"},
			{"-o", scriptDir + string(filepath.Separator), "github.com/agents-sandbox/asb/cmd/asb-task",
				"github.com/agents-sandbox/asb/cmd/asb-export", "github.com/agents-sandbox/asb/internal/testkit/fakes/cmd/fake"},
		} {
			cmd := exec.Command("go", append([]string{"build"}, args...)...)
			cmd.Env, cmd.Dir = env, startDir
			if out, err := cmd.CombinedOutput(); err != nil {
				scriptErr = fmt.Errorf("build the scripts' tools: %w\n%s", err, out)
				return
			}
		}
	})
	return scriptDir, scriptErr
}

// RemoveScriptTools deletes what ScriptTools built (call it from TestMain).
func RemoveScriptTools() {
	if scriptDir != "" {
		_ = os.RemoveAll(scriptDir)
	}
}
