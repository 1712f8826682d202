package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var netlabBuild struct {
	sync.Once
	bin []byte
	err error
	out []byte
}

// StaticNetlab returns the network lab's program (internal/testkit/netlab),
// built without cgo once per test binary: its servers run in the nested
// guest and its probe in the microVM, neither of which has a Go toolchain.
func StaticNetlab(t testing.TB) []byte {
	t.Helper()
	netlabBuild.Do(func() {
		dir, err := os.MkdirTemp("", "asb-netlab-")
		if err != nil {
			netlabBuild.err = err
			return
		}
		defer os.RemoveAll(dir)
		out := filepath.Join(dir, "netlab")
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", out,
			"github.com/agents-sandbox/asb/internal/testkit/netlab/netlab")
		cmd.Env = WithEnv(os.Environ(), "HOME="+startHome, InstallEnv)
		if netlabBuild.out, netlabBuild.err = cmd.CombinedOutput(); netlabBuild.err == nil {
			netlabBuild.bin, netlabBuild.err = os.ReadFile(out)
		}
	})
	if netlabBuild.err != nil {
		t.Fatalf("static build of netlab: %v\n%s", netlabBuild.err, netlabBuild.out)
	}
	return netlabBuild.bin
}
