package taskcmd_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/host"
	"github.com/agents-sandbox/asb/internal/testkit/fakehost"
	"github.com/agents-sandbox/asb/internal/testkit/fakes"
	"github.com/agents-sandbox/asb/internal/testkit/testenv"
	"github.com/agents-sandbox/asb/runner"
)

// TestHostCheckRefusesBeforeAnyBuild: on a host that cannot boot a
// microVM, `asb task agent` in a fresh outer folder stops at vm:create's
// first command with doctor's reason and fix: nothing is built, loaded or
// created. image:load still works there, and ASB_SKIP_HOST_CHECK=1 goes on.
func TestHostCheckRefusesBeforeAnyBuild(t *testing.T) {
	for _, shape := range []string{"kvm-no-virt", "no-kvm"} {
		t.Run(shape, func(t *testing.T) {
			s := newSandbox(t, generator.DefaultOptions("opencode", "demo"))
			t.Setenv(fakehost.ShapeEnv, shape)
			_, errOut, code := s.run("", "task", "agent")
			if code == 0 {
				t.Fatalf("agent ran on a %s host:\n%s", shape, errOut)
			}
			want := []string{"This host cannot boot the agent's microVM", "fix: ", host.SkipEnv + "=1",
				"task vm:create failed", "needed by agent → vm:start"}
			for _, w := range want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
			// Only the status checks before the refusal; no build, no create.
			if got := summary(s.calls()); !slices.Equal(got, []string{"msb volume ls", "msb inspect"}) {
				t.Errorf("tools run before the refusal: %q", got)
			}
			// Preparing the image is still useful here.
			mustRun(t, s, "task", "image:load")
			if got := summary(s.calls()); !slices.Contains(got, "msb load") {
				t.Errorf("image:load on a %s host ran %q", shape, got)
			}
			t.Setenv(host.SkipEnv, "1")
			_, errOut, code = s.run("", "task", "agent")
			if code != 0 || !strings.Contains(errOut, "the host check is skipped") {
				t.Fatalf("with %s=1: exit %d\n%s", host.SkipEnv, code, errOut)
			}
			if got := summary(s.calls()); !slices.Contains(got, "msb create") || !slices.Contains(got, "msb exec") {
				t.Errorf("with %s=1 agent ran %q", host.SkipEnv, got)
			}
		})
	}
}

// procSandbox is a sandbox whose asb runs as the real binaries (asb execs
// asb-task), for what only processes show: signals, locks, kill -9.
type procSandbox struct {
	*sandbox
	asb, msbHome string
	env          []string
}

func newProcSandbox(t *testing.T) *procSandbox {
	s := newSandbox(t, generator.DefaultOptions("opencode", "demo"))
	p := &procSandbox{sandbox: s, asb: buildAsb(t), msbHome: filepath.Join(t.TempDir(), "msb")}
	t.Setenv("MSB_HOME", p.msbHome)
	// The real binaries look at the real host: let them past the check.
	t.Setenv(host.SkipEnv, "1")
	testenv.KillMachinesAtCleanup(t, p.msbHome)
	p.env = os.Environ()
	return p
}

func (p *procSandbox) start(t *testing.T, args ...string) *testenv.Proc {
	return testenv.Start(t, p.dir, p.env, append([]string{p.asb}, args...)...)
}

func (p *procSandbox) waitStatus(t *testing.T, vm, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		if rec, err := fakes.VM(p.state, vm); err == nil && rec.Status == want {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the VM %s never became %s", vm, want)
}

// TestInterruptedBootIsReaped: Ctrl-C while msb boots a VM that spins (as on
// a host with /dev/kvm but no CPU virtualization) ends the boot at once: no
// msb machine process is left spinning, the half-made VM is removed, and
// the next run creates it.
func TestInterruptedBootIsReaped(t *testing.T) {
	testenv.Slow(t)
	p := newProcSandbox(t)
	id := p.identity()
	t.Setenv(fakes.BootEnv, "spin") // for 600 s, unless it is ended
	p.env = os.Environ()
	run := p.start(t, "task", "agent")
	p.waitStatus(t, id.VM, "Starting")
	if len(testenv.Machines(id.VM, p.msbHome)) != 1 {
		t.Fatalf("the stand-in boots without a machine process")
	}
	if err := run.Interrupt(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, errOut, code := run.Wait(ctx)
	if code <= 0 {
		t.Fatalf("interrupted agent: exit %d\n%s", code, errOut)
	}
	for _, w := range []string{"asb: booting " + id.VM + " (Ctrl-C stops it)", "the boot of " + id.VM + " did not finish: ended its msb machine process",
		"removed the half-made VM", "interrupted"} {
		if !strings.Contains(errOut, w) {
			t.Errorf("stderr lacks %q:\n%s", w, errOut)
		}
	}
	testenv.NoMachineLeft(t, id.VM, p.msbHome)
	if _, err := fakes.VM(p.state, id.VM); err == nil {
		t.Error("the half-made VM is still recorded")
	}
	t.Setenv(fakes.BootEnv, "")
	if _, errOut, code := p.run("", "task", "agent"); code != 0 {
		t.Fatalf("the run after the interrupt: exit %d\n%s", code, errOut)
	}
}

// TestFailedCreateLeavesNoVM: a create that msb fails (it records the VM
// Stopped, as a boot that ends early or is interrupted under load does)
// leaves no VM behind, so the next run creates it, instead of taking the
// Stopped record for a VM made (vm:create's status is msb inspect) and
// starting one that never had its home's folders given back or its
// secrets stamped. (CI run 19: Ctrl-C of a real boot left a Stopped VM.)
func TestFailedCreateLeavesNoVM(t *testing.T) {
	p := newProcSandbox(t)
	id := p.identity()
	t.Setenv(fakes.BootEnv, "fail")
	// msb's log of the VM, which its removal takes with it: why it stopped
	// is said first (the VM's and msb's text, shown as termtext shows it).
	logs := filepath.Join(t.TempDir(), "system.jsonl")
	if err := os.WriteFile(logs, []byte(`{"t":"2026-12-06T09:30:20Z","s":"system","d":"DEBUG virtiofs: lookup name=etc\n","e":null}
{"t":"2026-12-06T09:30:21Z","s":"system","d":"[    4.02] reboot: Restarting system\u001b[31m\n","e":null}
{"t":"2026-12-06T09:30:21Z","s":"system","d":"SU5GTyB2c3RhdGU6IFJlY2VpdmVkIEtWTV9FWElUX1NIVVRET1dOIHNpZ25hbAo=","e":"b64"}
{"t":"2026-12-06T09:30:22Z","s":"stdout","d":"the program's own output\n","e":null}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(fakes.LogsEnv, logs)
	p.env = os.Environ()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, errOut, code := p.start(t, "task", "vm:create").Wait(ctx)
	if code == 0 {
		t.Fatalf("vm:create of a boot that fails: exit 0\n%s", errOut)
	}
	for _, want := range []string{"the create of " + id.VM + " did not finish (msb says Stopped): removed the half-made VM",
		"the end of msb's log of " + id.VM + " (debug lines left out):\n  [    4.02] reboot: Restarting system",
		"\n  INFO vstate: Received KVM_EXIT_SHUTDOWN signal\n"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	for _, not := range []string{"virtiofs", "\x1b", "the program's own output"} {
		if strings.Contains(errOut, not) {
			t.Errorf("stderr has %q: a debug line, a raw control character or another source's text:\n%s", not, errOut)
		}
	}
	if rec, err := fakes.VM(p.state, id.VM); err == nil {
		t.Fatalf("the failed create left the VM recorded %s", rec.Status)
	}
	t.Setenv(fakes.BootEnv, "")
	t.Setenv(fakes.MachineDelayEnv, "")
	p.env = os.Environ()
	p.calls()
	if _, errOut, code := p.start(t, "task", "vm:create").Wait(ctx); code != 0 {
		t.Fatalf("the run after the failed create: exit %d\n%s", code, errOut)
	}
	if got := summary(p.calls()); !slices.Contains(got, "msb create") {
		t.Errorf("the run after the failed create made no VM: it invoked %q", got)
	}
}

// TestKilledRunFreesTheLock: kill -9 of `asb task` in the middle of a boot
// leaves no lock behind, and the next `asb task agent` ends the boot it
// left spinning instead of waiting for it (msb's own stop, remove and
// --replace wait minutes), then starts the VM.
func TestKilledRunFreesTheLock(t *testing.T) {
	p := newProcSandbox(t)
	id := p.identity()
	t.Setenv(fakes.BootEnv, "spin")
	p.env = os.Environ()
	run := p.start(t, "task", "vm:create")
	p.waitStatus(t, id.VM, "Starting")
	if err := run.Kill(); err != nil { // asb exec'd asb-task: the engine itself
		t.Fatal(err)
	}
	<-run.Done()
	if len(testenv.Machines(id.VM, p.msbHome)) != 1 {
		t.Fatal("kill -9 ended the boot too: this test proves nothing")
	}
	t.Setenv(fakes.BootEnv, "")
	p.env = os.Environ()
	next := p.start(t, "task", "agent")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, errOut, code := next.Wait(ctx)
	if code != 0 || strings.Contains(errOut, "waiting for another asb task") || !strings.Contains(errOut, "the boot of "+id.VM+" did not finish") {
		t.Fatalf("after kill -9: exit %d\n%s", code, errOut)
	}
	testenv.NoMachineLeft(t, id.VM, p.msbHome)
}

// TestConcurrentAgentsMakeOneVM: two `asb task agent` at once in one outer
// folder make one VM and one home volume; the second waits, says so, and
// attaches to the VM the first made.
func TestConcurrentAgentsMakeOneVM(t *testing.T) {
	p := newProcSandbox(t)
	t.Setenv(fakes.BootEnv, "slow")
	t.Setenv(fakes.BootSecondsEnv, "1")
	p.env = os.Environ()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]string, 2)
	codes := make([]int, 2)
	for i := range 2 {
		run := p.start(t, "task", "agent")
		wg.Go(func() { _, errs[i], codes[i] = run.Wait(ctx) })
	}
	wg.Wait()
	for i := range 2 {
		if codes[i] != 0 {
			t.Fatalf("run %d: exit %d\n%s", i, codes[i], errs[i])
		}
	}
	got := summary(p.calls())
	count := func(c string) int {
		n := 0
		for _, g := range got {
			if g == c {
				n++
			}
		}
		return n
	}
	// Three execs: vm:create's, which gives dev its home's folders back, and the two agents.
	if count("msb create") != 1 || count("msb volume create") != 1 || count("msb exec") != 3 {
		t.Errorf("two concurrent agents ran %q; want one create, one volume, three execs", got)
	}
	if !strings.Contains(errs[0]+errs[1], "waiting for another asb task in this folder") {
		t.Errorf("neither run said it waited:\n%s\n---\n%s", errs[0], errs[1])
	}
	st, err := runner.ReadState(p.dir)
	if err != nil || st.HomeVolume == "" {
		t.Errorf("state: %+v %v", st, err)
	}
	mustRun(t, p.sandbox, "task", "vm:stop") // ends the booted VM's machine
}

// TestLostStateFindsTheHome: after .asb/state.yaml is deleted, the next
// run finds this clone's home volume in msb and keeps using it.
func TestLostStateFindsTheHome(t *testing.T) {
	s := newSandbox(t, generator.DefaultOptions("opencode", "demo"))
	mustRun(t, s, "task", "agent")
	s.calls() // reset the log
	before, err := runner.ReadState(s.dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(s.dir, runner.StatePath)); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := s.run("", "task", "vm:rm", "agent") // the VM is recreated, with the old home
	if code != 0 || !strings.Contains(errOut, "found this clone's home volume "+before.HomeVolume) {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	after, _ := runner.ReadState(s.dir)
	if after.HomeVolume != before.HomeVolume {
		t.Errorf("home volume %q after the loss, want %q", after.HomeVolume, before.HomeVolume)
	}
	for _, c := range s.calls() {
		if c[0] == "msb" && len(c) > 2 && c[1] == "volume" && c[2] == "create" {
			t.Errorf("a new home volume was created: %v", c)
		}
	}
}

// TestWarmAgentAfterAKilledBoot: a warm folder whose VM was stopped, then
// left booting by an asb killed with -9 (its msb machine spins on, holding
// the VM's lifecycle lock as a running VM does): the next asb task agent's
// msb exec is answered "in state Starting and cannot be started" (as the
// real msb answers in the booted guest), and the run goes the full way:
// the boot is ended, the VM started, the agent attached.
func TestWarmAgentAfterAKilledBoot(t *testing.T) {
	p := newProcSandbox(t)
	id := p.identity()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for range 2 { // cold, then warm: the record is there
		if _, errOut, code := p.start(t, "task", "agent").Wait(ctx); code != 0 {
			t.Fatalf("agent: exit %d\n%s", code, errOut)
		}
	}
	if _, errOut, code := p.start(t, "task", "vm:stop").Wait(ctx); code != 0 {
		t.Fatalf("vm:stop: exit %d\n%s", code, errOut)
	}
	t.Setenv(fakes.BootEnv, "spin")
	t.Setenv(fakes.MachineDelayEnv, "0.5") // as under load: msb's Starting comes before its lock
	p.env = os.Environ()
	run := p.start(t, "task", "vm:start")
	p.waitStatus(t, id.VM, "Starting")
	if err := run.Kill(); err != nil {
		t.Fatal(err)
	}
	<-run.Done()
	t.Setenv(fakes.BootEnv, "")
	t.Setenv(fakes.MachineDelayEnv, "")
	p.env = os.Environ()
	p.calls()
	out, errOut, code := p.start(t, "task", "agent").Wait(ctx)
	got := summary(p.calls())
	if code != 0 || !strings.Contains(out, "fake-exec["+id.VM+"]") || !strings.Contains(errOut, "the boot of "+id.VM+" did not finish") ||
		len(got) == 0 || got[0] != "msb exec" || !slices.Contains(got, "msb start") {
		t.Fatalf("agent after a killed boot: exit %d, calls %q\n%s%s", code, got, out, errOut)
	}
	if strings.Contains(errOut, "cannot be started") {
		t.Errorf("msb's answer was shown:\n%s", errOut)
	}
	testenv.NoMachineLeft(t, id.VM, p.msbHome)
}
