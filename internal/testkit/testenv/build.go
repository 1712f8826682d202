package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// startHome is $HOME as the test binary started: tests set HOME to a temp
// folder, and go build must not get an empty build cache with it.
var startHome = os.Getenv("HOME")

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
