package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/host"
	"github.com/agents-sandbox/asb/internal/testkit/testenv"
	"github.com/agents-sandbox/asb/runner"
)

// TestRealMSBExecAnswers checks, against the real msb, what a warm asb
// task agent relies on (host/msbstate.go):
//   - msb exec into a sandbox msb does not have answers, alone on its
//     standard error, "error: sandbox not found: NAME", and exits 1;
//   - a sandbox's lifecycle lock is held while it runs and not once it is
//     stopped (runner.MSB.IsRunning), and its file stays;
//   - msb exec into a stopped sandbox starts it itself: where the host
//     cannot boot, it answers "error: failed to start "NAME"" first and
//     exits 1 (0.7.2 on a host without /dev/kvm, seen here: the Stopped
//     record a failed create leaves); where it can, the command runs and
//     msb stops the sandbox again.
//
// The stand-in msb (internal/testkit/fakes) answers the same.
func TestRealMSBExecAnswers(t *testing.T) {
	msb := testenv.MSB(t)
	env := testenv.MSBEnv(t)
	home := envOf(env, "MSB_HOME")
	t.Setenv("MSB_HOME", home) // runner.MSB looks where msb keeps its state
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	const missing = "asb-exec-missing"
	_, stderr, err := testenv.RunErr(ctx, "", env, nil, msb, "exec", missing, "--", "true")
	if code := exitCode(err); code != 1 || string(stderr) != host.MSBNotFound(missing) {
		t.Errorf("msb exec into a sandbox msb does not have: exit %d, stderr %q, want 1 and %q", code, stderr, host.MSBNotFound(missing))
	}
	if (runner.MSB{}).IsRunning(missing) {
		t.Error("IsRunning says yes for a sandbox msb never had")
	}
	if testenv.HostShape() == "kvm-no-virt" {
		t.Skip("the rest makes a sandbox, whose boot spins for minutes on /dev/kvm without CPU virtualization")
	}

	image := loadTinyImage(t, ctx, msb, env)
	const vm = "asb-exec-answers"
	t.Cleanup(func() {
		_, _, _ = testenv.RunErr(context.Background(), "", env, nil, msb, "remove", "--force", "--quiet", vm)
	})
	_, stderr, err = testenv.RunErr(ctx, "", env, nil, msb, "create", image, "--name", vm, "--pull", "never")
	if testenv.CanBoot() {
		if err != nil {
			t.Fatalf("msb create on a host that can boot: %v\n%s", err, stderr)
		}
		if !(runner.MSB{}).IsRunning(vm) {
			t.Fatal("the sandbox runs, and its lifecycle lock is not held")
		}
		testenv.Run(t, ctx, "", env, msb, "stop", vm)
	} else if err == nil {
		t.Fatalf("msb create succeeded on a host of shape %s", testenv.HostShape())
	}
	if _, err := os.Stat(host.MSBLifecycleLock(home, vm)); err != nil {
		t.Errorf("msb keeps no lifecycle lock where asb looks (%v): a warm asb task agent would ask msb at each run", err)
	}
	if (runner.MSB{}).IsRunning(vm) {
		t.Fatal("the sandbox is stopped, and its lifecycle lock is held")
	}
	_, stderr, err = testenv.RunErr(ctx, "", env, nil, msb, "exec", vm, "--", "true")
	code := exitCode(err)
	switch {
	case testenv.CanBoot() && code != 0:
		t.Errorf("msb exec into a stopped sandbox, on a host that can boot: exit %d\n%s", code, stderr)
	case !testenv.CanBoot() && (code != 1 || !strings.HasPrefix(string(stderr), host.MSBFailedStart(vm))):
		t.Errorf("msb exec into a stopped sandbox, on a host that cannot boot: exit %d, stderr %q, want 1 and %q first", code, stderr, host.MSBFailedStart(vm))
	}
	if (runner.MSB{}).IsRunning(vm) {
		t.Error("after msb exec into a stopped sandbox, its lifecycle lock is held: msb did not stop it again")
	}
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}
