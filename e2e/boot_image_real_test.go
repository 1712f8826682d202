package e2e

import (
	"context"
	_ "embed"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/testkit/testenv"
	"github.com/agents-sandbox/asb/templates"
)

//go:embed testdata/boot/realimage.sh
var realImageScenario string

// The real image's guest session, shared by TestRealBootRealImage and, in
// the nested guest, the real agent's end to end (net_real_agent_test.go).
var realImageSession struct {
	once    sync.Once
	s       *testenv.Session
	lab     bool // the network lab ran, and the agent with it
	skipped bool
}

// realImageRun runs the real image's session once per test binary.
func realImageRun(t *testing.T) (*testenv.Session, bool) {
	t.Helper()
	realImageSession.once.Do(func() {
		defer func() { realImageSession.skipped = t.Skipped() }()
		realImageSession.s, realImageSession.lab = runRealImage(t)
	})
	if realImageSession.skipped {
		t.Skip("the real image's session was skipped (see the first test that asked for it)")
	}
	if realImageSession.s == nil {
		t.Fatal("the real image's session could not run (see the first test that asked for it)")
	}
	return realImageSession.s, realImageSession.lab
}

// runRealImage: the folder asb init writes for OpenCode, untouched (asb's
// own render, so its user approves nothing), and the image podman builds
// here from its toolchain/ on the Debian base made from packages (the
// image test's layers: whichever runs first builds them), in a guest
// session of its own (loading the image takes minutes under emulation).
// In the nested guest the network lab runs in it too, with the scripted
// model on OpenCode's provider host, for the agent's end to end.
func runRealImage(t *testing.T) (*testenv.Session, bool) {
	g := testenv.NewGuest(t, "realimage")
	if g == nil {
		return nil, false
	}
	// The image's build on this host (bounded by its own 20 minutes) ran
	// beside the boot session when this binary ran that one first.
	a, tar := realImageBuilt(t)
	if err := os.Rename(tar, filepath.Join(g.Data, "image.tar")); err != nil {
		t.Fatal(err)
	}
	g.AddMSB(t)
	g.AddStaticAsb(t)
	g.WriteFile(t, "bin/builder", []byte(guestBuilder), 0o755)
	g.CopyDir(t, "outer", a.dir)
	scenario := realImageScenario
	if f := os.Getenv("ASB_REALIMAGE_SCENARIO"); f != "" {
		// Another scenario, to work on a piece of this one (docs/testing.md).
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		scenario = string(raw)
	}
	script := bootLib + bootPrelude + scenario
	lab := g.Shape == testenv.ShapeNested && os.Getenv(agentSkipEnv) == ""
	if lab {
		// As root, before prelude.sh hands over to the user.
		script = netLabScript + "[ \"$(id -u)\" = 0 ] && lab_up\n" + script
		agentLab(t, g, a.dir)
	}
	return g.Run(t, context.Background(), script), lab
}

// TestRealBootRealImage: the real toolchain image boots as asb's VM. Exec
// runs as dev in /workspace, with the image's agent, Node.js and podman.
func TestRealBootRealImage(t *testing.T) {
	s, lab := realImageRun(t)
	t.Logf("real boot: host shape %s", s.Shape)
	ok(t, s, "real_create")
	agent, err := generator.LoadAgent(templates.FS, "opencode")
	if err != nil {
		t.Fatal(err)
	}
	out := strings.Split(strings.TrimSpace(ok(t, s, "real_exec")), "\n")
	if len(out) != 6 || out[0] != "dev" || out[1] != "1000" || out[2] != "/workspace" || path.Base(out[3]) != agent.Program() ||
		!strings.HasPrefix(out[4], "v") || !strings.HasPrefix(out[5], "podman version ") {
		t.Fatalf("in the real image's VM: %q; want dev, 1000, /workspace, %s on PATH, node, podman", out, agent.Program())
	}
	t.Logf("the real image's VM: %s (create %.1f s, exec %.1f s under %s)", strings.Join(out, " | "),
		s.Steps["real_create"].Secs, s.Steps["real_exec"].Secs, s.Shape)
	if v := realImageAgentVersion(t, s, lab); v != agent.Version {
		t.Fatalf("the real image's VM runs OpenCode %q; the preset pins %s", v, agent.Version)
	}
	ok(t, s, "real_rm")
}

// ownLogVersion finds the version OpenCode's own log gives for a session
// it created ("message=created … version=1.18.33 …").
var ownLogVersion = regexp.MustCompile(`message=created .* version=(\S+) `)

// realImageAgentVersion is the version of OpenCode that ran in the real
// image's VM: where the lab ran, the one its own log of the agent's run
// gives (the session starts OpenCode once: each start costs about 20 s
// under emulation); elsewhere what opencode --version printed.
func realImageAgentVersion(t *testing.T, s *testenv.Session, lab bool) string {
	t.Helper()
	if !lab {
		return strings.TrimSpace(ok(t, s, "real_version"))
	}
	own := ok(t, s, "agent_own_log")
	m := ownLogVersion.FindStringSubmatch(own)
	if m == nil {
		t.Fatalf("OpenCode's own log of the agent's run gives no version (no \"message=created … version=\" line; the agent's run: TestRealNetAgentEndToEnd):\n%s", lastLines(own, 20))
	}
	return m[1]
}
