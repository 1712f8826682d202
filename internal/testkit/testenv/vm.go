package testenv

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// VMRun is how an `asb task vm:create` run ended on this host shape.
type VMRun struct {
	Booted   bool   // the host can boot, and the create succeeded
	Record   []byte // `msb inspect VM --format json`, where the host cannot boot
	Status   string // the record's status then (Starting, Stopped, …)
	Spinning bool   // an msb machine process was spinning when Ctrl-C came
	Stderr   string
	Code     int
}

// CreateVM starts `asb task vm:create` of vm (start) and waits for it by
// the host-shape rules, never for a boot to fail: where the host can boot,
// for the create to end (it must succeed); elsewhere, for msb's record of
// vm (inspectable while Starting; StartPolling, which makes a create msb's
// own database refused once more), then — once msb's machine process
// spins, or after 5 s — it presses Ctrl-C and waits for asb to end. A
// create that ends without a record otherwise fails with what it said.
// The caller checks what it needs of the result (NoMachineLeft, the
// boundary, …).
func CreateVM(t testing.TB, ctx context.Context, start func() *Proc, msb string, env []string, vm, msbHome string) VMRun {
	t.Helper()
	if CanBoot() {
		run := start()
		_, stderr, code := run.Wait(ctx)
		if code != 0 {
			t.Fatalf("vm:create on a host that can boot: exit %d\n%s", code, stderr)
		}
		return VMRun{Booted: true, Stderr: stderr, Code: code}
	}
	run, raw, err := StartPolling(t, ctx, msb, env, vm, func(bool) *Proc { return start() })
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatalf("msb inspect --format json: %v\n%s", err, raw)
	}
	r := VMRun{Record: raw, Status: rec.Status}
	// Ctrl-C once msb's machine process spins (before it, msb create ends
	// cleanly by itself); a boot that fails at once never gets there.
	for deadline := time.Now().Add(5 * time.Second); r.Status == "Starting" && time.Now().Before(deadline) && !r.Spinning; time.Sleep(50 * time.Millisecond) {
		r.Spinning = len(Machines(vm, msbHome)) > 0
	}
	if err := run.Interrupt(); err != nil {
		t.Fatal(err)
	}
	_, r.Stderr, r.Code = run.Wait(ctx)
	if r.Code <= 0 {
		t.Fatalf("vm:create on a host that cannot boot (%s): exit %d\n%s", HostShape(), r.Code, r.Stderr)
	}
	return r
}

// CheckInterrupted checks what a create interrupted on a host that cannot
// boot must leave: msb took the generated config (no config error), asb
// ended a spinning boot and said so, and no msb machine process or msb
// create of image is left.
func (r VMRun) CheckInterrupted(t testing.TB, vm, image, msbHome string) {
	t.Helper()
	for _, bad := range []string{"unknown field", "invalid sandbox configuration", "invalid config", "image not cached"} {
		if strings.Contains(r.Stderr, bad) {
			t.Errorf("msb rejected the generated config (%q):\n%s", bad, r.Stderr)
		}
	}
	// Where /dev/kvm exists without vmx/svm, msb's machine process spins
	// until it is ended, so asb must end it and say so. Without /dev/kvm
	// it fails by itself within a second or two: it may be gone before
	// asb's reap looks, and then there is nothing to end (NoMachineLeft
	// below is what must hold on every shape).
	if r.Spinning && HostShape() == "kvm-no-virt" && !strings.Contains(r.Stderr, "the boot of "+vm+" did not finish: ended its msb machine process") {
		t.Errorf("Ctrl-C during the boot, and asb did not end it:\n%s", r.Stderr)
	}
	NoMachineLeft(t, vm, msbHome)
	if out, _, err := RunErr(context.Background(), "", nil, nil, "pgrep", "-f", "msb create "+image); err == nil {
		t.Errorf("msb create still runs: %s", out)
	}
}
