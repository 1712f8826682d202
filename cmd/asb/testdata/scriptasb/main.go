// Command scriptasb is asb as cmd/asb's scripts run it (testenv.ScriptTools
// builds it as "asb", once per test binary): the real commands, with the two
// hooks a script sets through its environment, the machine policy it names
// ($ASB_TEST_MACHINE_POLICY, never this machine's /etc/asb/policy.yaml) and
// the host shape it pretends (fakehost.ShapeEnv). asb itself reads neither:
// a variable that moved the policy floor would let anyone step below it. It
// lives under testdata/ so that no pattern (go install ./cmd/..., go list
// ./...) names it: no release builds or installs it.
//
// A small binary of its own rather than the test binary under another
// name: that one links go-task's engine and Kubernetes' client for the
// other tests, and their package inits made each asb a script ran cost 3.5
// times a real asb's start (95 ms against 27 on the development machine).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/cmd/asb/internal/root"
	"github.com/agents-sandbox/asb/internal/testkit/fakehost"
	"github.com/agents-sandbox/asb/internal/testkit/testenv"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	f := root.NewFactory(cmdutil.System())
	f.MachinePolicy = testenv.MachinePolicy()
	if h, ok := fakehost.ForShape(os.Getenv(fakehost.ShapeEnv)); ok {
		f.Host = h
	}
	code := root.Run(ctx, os.Args[1:], f)
	stop()
	os.Exit(code)
}
