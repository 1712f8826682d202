package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

var netlabBuild programs

// StaticNetlab returns the network lab's program (internal/testkit/netlab),
// built without cgo once per test binary: its servers run in the nested
// guest and its probe in the microVM, neither of which has a Go toolchain.
// RemoveBuilds deletes the build.
func StaticNetlab(t testing.TB) []byte {
	t.Helper()
	dir, err := netlabBuild.build("asb-netlab-", func(dir string) []string {
		return []string{"-trimpath", "-ldflags=-s -w", "-o", into(dir), "github.com/agents-sandbox/asb/internal/testkit/netlab/netlab"}
	})
	if err != nil {
		t.Fatalf("static build of netlab: %v", err)
	}
	bin, err := os.ReadFile(filepath.Join(dir, "netlab"))
	if err != nil {
		t.Fatalf("static build of netlab: %v", err)
	}
	return bin
}
