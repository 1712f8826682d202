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

// InstallEnv is how asb is built for users (the Makefile's ASB_BUILD_ENV,
// which TestAsbIsBuiltAsInstalled holds to this): without cgo, a static
// executable, so a start maps no dynamic loader or C library (about a
// fifth of `asb version`'s time natively; docs/startup.md). The builds
// of tests and of the benchmark use it, so they run what users run, and
// the nested guest, which has no Go toolchain, needs it.
const InstallEnv = "CGO_ENABLED=0"

// programs is a folder of programs go build makes once per test binary.
type programs struct {
	once sync.Once
	dir  string
	err  error
}

// build makes the folder (named after prefix) and runs go build once per
// args, each given the folder; later calls return what the first made.
func (p *programs) build(prefix string, builds ...func(dir string) []string) (string, error) {
	p.once.Do(func() {
		if p.dir, p.err = os.MkdirTemp("", prefix); p.err != nil {
			return
		}
		for _, args := range builds {
			cmd := exec.Command("go", append([]string{"build"}, args(p.dir)...)...)
			cmd.Env, cmd.Dir = WithEnv(os.Environ(), "HOME="+startHome, InstallEnv), startDir
			if out, err := cmd.CombinedOutput(); err != nil {
				p.err = fmt.Errorf("go build %v: %w\n%s", args(p.dir), err, out)
				return
			}
		}
	})
	return p.dir, p.err
}

// remove deletes the folder, when there is one.
func (p *programs) remove() {
	if p.dir != "" {
		_ = os.RemoveAll(p.dir)
	}
}

var asbBuild, scriptBuild programs

// into is go build's output flag for the folder dir itself (each program
// named after its package).
func into(dir string) string { return dir + string(filepath.Separator) }

// BuildAsb compiles asb and its go-task engine asb-task, as a user installs
// them (side by side), once per test binary, and returns asb's path.
func BuildAsb(t testing.TB) string {
	t.Helper()
	dir, err := asbBuild.build("asb-bin-", func(dir string) []string {
		return []string{"-o", into(dir), "github.com/agents-sandbox/asb/cmd/asb", "github.com/agents-sandbox/asb/cmd/asb-task"}
	})
	if err != nil {
		t.Fatalf("build asb and asb-task: %v", err)
	}
	return filepath.Join(dir, "asb")
}

// RemoveBuilds deletes every program this test binary built (BuildAsb,
// ScriptTools, AddStaticAsb, StaticNetlab): call it from TestMain, after
// m.Run. (Each is about 100 MB; a test binary that left its builds filled
// /tmp.)
func RemoveBuilds() {
	for _, p := range []*programs{&asbBuild, &scriptBuild, &ptyrunBuild, &netlabBuild} {
		p.remove()
	}
}

// ScriptTools builds, once per test binary, what cmd/asb's scripts run,
// each a small program of its own: asb (cmd/asb/testdata/scriptasb: asb
// with the scripts' hooks), asb-task and asb-export as released, and fake,
// the stand-in msb, docker and podman (fakes.Link). It returns their
// folder, which a script puts first on its PATH (fake aside: only fakes
// DIR links it). RemoveBuilds deletes it.
func ScriptTools() (string, error) {
	return scriptBuild.build("asb-script-bin-",
		func(dir string) []string {
			return []string{"-o", filepath.Join(dir, "asb"), "github.com/agents-sandbox/asb/cmd/asb/testdata/scriptasb"}
		},
		func(dir string) []string {
			return []string{"-o", into(dir), "github.com/agents-sandbox/asb/cmd/asb-task",
				"github.com/agents-sandbox/asb/cmd/asb-export", "github.com/agents-sandbox/asb/internal/testkit/fakes/cmd/fake"}
		})
}
