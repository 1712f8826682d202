package main

import (
	"os/exec"
	"strings"
	"testing"
)

// heavy are packages asb itself must not link: go-task's executor and what
// it brings (chroma for error snippets, go-getter and the cloud SDKs for
// remote Taskfiles, bubbletea for prompts). They live in asb-task, which
// only `asb task` runs (runner/engine.go says why).
// An entry ending in "/..." stands for the module's every package; the
// others are one package (asb may use go-task's light taskfile/ast).
var heavy = []string{
	"github.com/go-task/task/v3",
	"github.com/go-task/task/v3/taskfile",
	"github.com/alecthomas/chroma/v2/...",
	"github.com/hashicorp/go-getter/...",
	"charm.land/bubbletea/v2/...",
	"google.golang.org/grpc/...",
	"github.com/aws/aws-sdk-go-v2/...",
}

func TestAsbLinksNoEngine(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/agents-sandbox/asb/cmd/asb").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, h := range heavy {
			mod, all := strings.CutSuffix(h, "/...")
			if dep == mod || all && strings.HasPrefix(dep, mod+"/") {
				t.Errorf("asb links %s (of %s): keep it in asb-task", dep, h)
			}
		}
	}
	// And the engine does link go-task: otherwise this test proves nothing.
	out, err = exec.Command("go", "list", "-deps", "github.com/agents-sandbox/asb/cmd/asb-task").Output()
	if err != nil || !strings.Contains(string(out), "github.com/go-task/task/v3\n") {
		t.Fatalf("asb-task does not link go-task: %v", err)
	}
}
