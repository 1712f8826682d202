package e2e

import (
	"context"
	_ "embed"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/testkit/testenv"
	"github.com/agents-sandbox/asb/templates"
)

//go:embed testdata/boot/realimage.sh
var realImageScenario string

// TestRealBootRealImage: the real toolchain image boots as asb's VM, in a
// guest session of its own (loading the image takes minutes under
// emulation): the folder asb init writes for OpenCode, untouched (asb's
// own render, so its user approves nothing), and the image podman builds
// here from its toolchain/ on the Debian base made from packages (the
// image test's layers: whichever runs first builds them). Exec runs as
// dev in /workspace, with the image's agent, Node.js and podman.
func TestRealBootRealImage(t *testing.T) {
	g := testenv.NewGuest(t)
	if g == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	podman := testenv.CachedPodman(t)
	asb := testenv.BuildAsb(t)
	env := testenv.WithEnv(os.Environ(), "ASB_BUILDER="+strings.Join(podman, " "), "ASB_BUILD_ARGS=")
	a := newImageFolder(t, ctx, asb, "e2e-real", env)
	testenv.Run(t, ctx, a.dir, env, asb, "task", "image:build")
	testenv.Run(t, ctx, "", nil, append(append([]string{}, podman...), "save", "-o", filepath.Join(g.Data, "image.tar"), a.id.BuildTag)...)
	cacheAs(podman, a.id.BuildTag, "opencode")
	g.AddMSB(t)
	g.AddStaticAsb(t)
	g.WriteFile(t, "bin/builder", []byte(guestBuilder), 0o755)
	g.CopyDir(t, "outer", a.dir)
	s := g.Run(t, ctx, bootPrelude+realImageScenario, 20*time.Minute)
	t.Logf("real boot: host shape %s", s.Shape)
	ok(t, s, "real_create")
	agent, err := generator.LoadAgent(templates.FS, "opencode")
	if err != nil {
		t.Fatal(err)
	}
	out := strings.Split(strings.TrimSpace(ok(t, s, "real_exec")), "\n")
	if len(out) != 6 || out[0] != "dev" || out[1] != "1000" || out[2] != "/workspace" || out[3] != agent.Version ||
		!strings.HasPrefix(out[4], "v") || !strings.HasPrefix(out[5], "podman version ") {
		t.Fatalf("in the real image's VM: %q; want dev, 1000, /workspace, opencode %s, node, podman", out, agent.Version)
	}
	t.Logf("the real image's VM: %s (create %.1f s, exec %.1f s under %s)", strings.Join(out, " | "),
		s.Steps["real_create"].Secs, s.Steps["real_exec"].Secs, s.Shape)
	if s.Notes["retried"] != "" {
		t.Logf("retried under emulation: %s", s.Notes["retried"])
	}
	ok(t, s, "real_rm")
}
