package e2e

import (
	"context"
	"embed"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/internal/testkit/testenv"
)

// The real-boot tests: asb itself creates, uses and removes a microVM that
// really boots, and the tests look at the boundary from inside it. On a
// host without CPU virtualization they run in the nested can-boot guest
// (testenv.Guest); the whole scenario is one guest session, shared by the
// tests below (a boot costs seconds under emulation).

//go:embed testdata/boot/prelude.sh
var bootPrelude string

//go:embed testdata/boot/scenario.sh
var bootScenario string

// bootSteps are steps of their own files, each sourced by one line of
// scenario.sh from $DATA/steps/ (e.g. steps_modes.sh).
//
//go:embed testdata/boot/steps_*.sh
var bootSteps embed.FS

// bootLib is what every real-boot guest session shares (on_fail, for
// testenv's Step.Diag; the retries of msb's own failures, each named by its
// message): it goes before the session's own script.
//
//go:embed testdata/boot/lib.sh
var bootLib string

// Canaries of the outer folder: none may be found inside the VM. The
// control value is in workspace/, where the VM must find it.
const (
	bootSecretOC    = "asb-boot-secret-oc-5e1d77"
	bootSecretGH    = "asb-boot-secret-gh-c02b91"
	bootCanaryYAML  = "asb-boot-canary-yaml-8a4f10"
	bootCanaryTask  = "asb-boot-canary-task-71c3e2"
	bootCanaryState = "asb-boot-canary-state-3d9b58"
	bootControl     = "asb-boot-control-ws-e6a204"
)

var bootSession struct {
	once    sync.Once
	s       *testenv.Session
	skipped bool // the first test skipped (no nested host, or ASB_SKIP_REAL_TOOLS=1)
}

// bootRun runs the scenario once per test binary and returns its session;
// a test that needs it and finds it failed fails too.
func bootRun(t *testing.T) *testenv.Session {
	t.Helper()
	bootSession.once.Do(func() {
		// A skip ends this goroutine inside Do; the others skip as it did.
		defer func() { bootSession.skipped = t.Skipped() }()
		bootSession.s = runBootScenario(t)
		if s := bootSession.s; s != nil {
			t.Logf("host shape of the real boot: %s (run by uid %s; guest CPU svm flags: %s; %s; guest clock source: %s)",
				s.Shape, s.Notes["user"], s.Notes["svm"], s.Notes["kvm"], s.Notes["clock"])
		}
	})
	if bootSession.skipped {
		t.Skip("the real-boot scenario was skipped (see the first real-boot test)")
	}
	if bootSession.s == nil {
		t.Fatal("the real-boot scenario could not run (see the first real-boot test)")
	}
	t.Logf("real boot: host shape %s", bootSession.s.Shape)
	return bootSession.s
}

// runBootScenario assembles the guest: the real msb, static asb, an outer
// folder made by asb's generator with canaries in its host-only files, and
// its busybox image (built here by the real podman), then runs the scenario.
func runBootScenario(t *testing.T) *testenv.Session {
	g := testenv.NewGuest(t, "boot")
	if g == nil {
		return nil
	}
	g.Memory = "6G" // steps_session.sh: a session's VM asks 4 GiB, and asb checks it fits
	// The guest's data (builds on this host) is bounded here; the guest
	// session itself by its progress (testenv.GuestStall).
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	o := newOuter(t, ctx)
	placeCanaries(t, o.dir)
	addMountForms(t, o.dir, g)
	if os.Getenv("ASB_BOOT_DEMO") == "leak" {
		leakOuter(t, o.dir)
	}
	// The agent's TUI: a stand-in in the image says who runs it, where, and
	// on which terminal.
	writeFile(t, filepath.Join(o.dir, "toolchain/rootfs/bin/opencode"),
		"#!/bin/sh\necho \"opencode-standin $(id -un) $(id -u) $(pwd) tty=$(tty)\"\n", 0o755)
	addGit(t, ctx, g, o.dir)
	podman := testenv.CachedPodman(t)
	tag := "localhost/asb-boot:test"
	testenv.Run(t, ctx, "", os.Environ(), append(append(append(podman, "build"), testenv.PodmanBuildArgs()...), "--tag", tag, filepath.Join(o.dir, "toolchain"))...)
	testenv.Run(t, ctx, "", os.Environ(), append(podman, "save", "-o", filepath.Join(g.Data, "image.tar"), tag)...)
	g.AddMSB(t)
	g.AddStaticAsb(t)
	if runsRealImage() {
		startRealImagePrep(t) // beside this session: see realImagePrep
	}
	g.WriteFile(t, "bin/builder", []byte(guestBuilder), 0o755)
	g.WriteFile(t, "canaries", []byte(strings.Join([]string{bootSecretOC, bootSecretGH, bootCanaryYAML,
		bootCanaryTask, bootCanaryState, bootControl}, "\n")+"\n"), 0o644)
	g.CopyDir(t, "outer", o.dir)
	steps, err := bootSteps.ReadDir("testdata/boot")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range steps {
		b, err := bootSteps.ReadFile("testdata/boot/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		g.WriteFile(t, "steps/"+e.Name(), b, 0o644)
	}
	return g.Run(t, context.Background(), bootLib+bootPrelude+bootScenario)
}

// leakOuter breaks the boundary on purpose, to watch the tests catch it
// (ASB_BOOT_DEMO=leak, docs/boot.md): the Taskfile's msb create also
// mounts the whole outer folder at /mnt/outer.
func leakOuter(t *testing.T, dir string) {
	t.Helper()
	p := filepath.Join(dir, "Taskfile.yml")
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	const at = "--mount-owned /var/lib/containers"
	if !strings.Contains(string(raw), at) {
		t.Fatalf("Taskfile.yml has no %q", at)
	}
	leaky := strings.Replace(string(raw), at, "--mount-dir {{q .ROOT_DIR}}:/mnt/outer "+at, 1)
	writeFile(t, p, leaky, 0o644)
	t.Log("ASB_BOOT_DEMO=leak: the VM also mounts the outer folder at /mnt/outer")
}

// guestBuilder stands in for podman in the guest, which has none: the
// image was built by the real podman on the test's host, and `save` streams
// that tar into the Taskfile's `msb load`.
const guestBuilder = `#!/bin/sh
case "$1" in
build) echo "builder stand-in: built by podman on the test host" ;;
image) [ "$2" = inspect ] ;;
save) cat "${DATA:-/data}/image.tar" ;;
*) echo "builder stand-in: unexpected: $*" >&2; exit 1 ;;
esac
`

// placeCanaries puts the secrets' values in secrets.env and a canary in
// each other host-only file of the folder, and the control in workspace/.
func placeCanaries(t *testing.T, dir string) {
	t.Helper()
	writeFile(t, filepath.Join(dir, "secrets.env"),
		"OPENCODE_API_KEY="+bootSecretOC+"\nGITHUB_TOKEN="+bootSecretGH+"\n", 0o600)
	appendFile(t, filepath.Join(dir, "secrets.yaml"), "# "+bootCanaryYAML+"\n")
	appendFile(t, filepath.Join(dir, "Taskfile.yml"), "# "+bootCanaryTask+"\n")
	writeFile(t, filepath.Join(dir, ".asb", "canary"), bootCanaryState+"\n", 0o644)
	writeFile(t, filepath.Join(dir, "workspace", "control.txt"), bootControl+"\n", 0o644)
}

func writeFile(t *testing.T, p, data string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
}

func appendFile(t *testing.T, p, data string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
}

// ok fails the test unless step name exited 0, and returns its output.
func ok(t *testing.T, s *testenv.Session, name string) string {
	t.Helper()
	st := s.Step(t, name)
	if st.Code != 0 {
		t.Fatalf("%s: %s", name, st.Why())
	}
	return st.Out
}

// TestRealBootCreate: inside a host that can boot, `asb task vm:create`
// passes asb's host check for the right reason (the CPU has svm or vmx and
// /dev/kvm works) and boots the VM; vm:exec runs a command in it.
func TestRealBootCreate(t *testing.T) {
	s := bootRun(t)
	ok(t, s, "doctor")
	ok(t, s, "create")
	if s.Notes["vm"] == "" {
		t.Fatal("msb ls lists no VM after vm:create")
	}
}

// TestRealBootExecAsDev: vm:exec runs as dev, with the uid the image's
// /etc/passwd gives dev, in /workspace.
func TestRealBootExecAsDev(t *testing.T) {
	s := bootRun(t)
	out := ok(t, s, "whoami")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("whoami printed %q", out)
	}
	f := strings.Split(lines[1], ":") // dev:x:UID:GID:…
	if len(f) < 3 || lines[0] != "dev "+f[2]+" /workspace" {
		t.Fatalf("vm:exec ran as %q; the image's dev is %q: want \"dev UID /workspace\"", lines[0], lines[1])
	}
}

// TestRealBootAgent: `asb task agent` attaches to the running VM through a
// terminal, as dev in /workspace, the image's agent command in place of
// the agent's TUI; the second run takes the warm path (asb replays its
// record without go-task: no engine lines).
func TestRealBootAgent(t *testing.T) {
	s := bootRun(t)
	for _, step := range []string{"agent", "agent_warm"} {
		out := ok(t, s, step)
		if !regexp.MustCompile(`opencode-standin dev 1000 /workspace tty=/dev/pts/\d+`).MatchString(out) {
			t.Fatalf("%s: the agent command did not run as dev in /workspace on a terminal:\n%s", step, out)
		}
	}
	// The first run left a warm record; the second replays it (asb runs
	// the checks and execs msb itself, with go-task's lines).
	if out := ok(t, s, "warm_record"); !strings.Contains(out, ".rec") {
		t.Fatalf("no warm record in .asb/warm after asb task agent: %q", out)
	}
	// The agent's own output goes from msb exec straight to the terminal,
	// asb not in between: a last line break lost there (ci76: the warm
	// run's output ended without the first's final CR LF, once in some
	// thirty runs) is msb's client's or the terminal's, and is not
	// compared; every line is.
	pts := regexp.MustCompile(`/dev/pts/\d+`)
	a, b := pts.ReplaceAllString(s.Steps["agent"].Out, "PTS"), pts.ReplaceAllString(s.Steps["agent_warm"].Out, "PTS")
	if strings.TrimRight(a, "\r\n") != strings.TrimRight(b, "\r\n") {
		t.Errorf("the warm asb task agent printed something else than the first:\n%s\n---\n%s", a, b)
	} else if a != b {
		t.Logf("the two runs' outputs differ only in their last line break (%q, %q): not asb's", a[len(strings.TrimRight(a, "\r\n")):], b[len(strings.TrimRight(b, "\r\n")):])
	}
}

// TestRealBootStopStart: a stopped VM is started again by the vm:start
// task (the engine's, under a vm:exec: speed_calls_stopped, the session's
// one restart; its msb calls are checked in boot_speed_real_test.go);
// vm:stop stops the VM (msb says Stopped), vm:rm removes it stopped, and
// vm:create makes it again.
func TestRealBootStopStart(t *testing.T) {
	s := bootRun(t)
	if out := ok(t, s, "speed_calls_stopped"); !strings.Contains(out, "msb start ") {
		t.Fatalf("a vm:exec into the stopped VM did not start it:\n%s", out)
	}
	ok(t, s, "stop")
	if out := ok(t, s, "status_stopped"); !strings.Contains(out, "Stopped") {
		t.Fatalf("after vm:stop, msb status says:\n%s", out)
	}
	ok(t, s, "rm")
	ok(t, s, "create2")
}

// TestRealBootFigures reports what asb costs over bare msb in the same
// guest: a create (everything up to date but the VM), an exec, and a warm
// agent attach. Ratios, since absolute times under emulation mean little
// (docs/boot.md). Not a timed test: it checks only that each ran.
func TestRealBootFigures(t *testing.T) {
	s := bootRun(t)
	ok(t, s, "x_msb_create")
	ok(t, s, "create2")
	rows := []struct {
		what     string
		asb, msb float64
	}{
		{"vm:create vs its msb create line", s.Steps["create2"].Secs, s.Steps["x_msb_create"].Secs},
		{fmt.Sprintf("warm exec true (median of %d)", speedSamples), stepMedian(t, s, "x_asb_exec"), stepMedian(t, s, "x_msb_exec")},
		{fmt.Sprintf("warm agent attach (median of %d)", speedSamples), stepMedian(t, s, "x_asb_agent"), stepMedian(t, s, "x_msb_agent")},
	}
	t.Logf("figures in the %s guest (seconds; asb/msb):", s.Shape)
	for _, r := range rows {
		t.Logf("  %-34s asb %6.2f  msb %6.2f  ratio %.2f", r.what, r.asb, r.msb, r.asb/r.msb)
	}
}
