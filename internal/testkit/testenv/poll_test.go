package testenv_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/internal/testkit/fakes"
	"github.com/agents-sandbox/asb/internal/testkit/testenv"
)

// TestPollRecordDoesNotWaitForTheBoot drives the helpers the real-msb tests
// use against the stand-in in its "spin" mode, whose boot takes ten
// minutes: the record is found while the create is still in flight, the
// create ends at a Ctrl-C while its machine spins on (as msb's does), and
// the machine is found and ended. The test is over in seconds, or its
// context fails it.
func TestPollRecordDoesNotWaitForTheBoot(t *testing.T) {
	dir := t.TempDir()
	fake, err := fakes.Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bin")
	if err := fakes.Link(fake, bin); err != nil {
		t.Fatal(err)
	}
	state, home := filepath.Join(dir, "state"), filepath.Join(dir, "msb")
	env := testenv.WithEnv(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		fakes.StateEnv+"="+state, "MSB_HOME="+home, fakes.BootEnv+"=spin", fakes.BootSecondsEnv+"=600")
	testenv.KillMachinesAtCleanup(t, home)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	msb := filepath.Join(bin, "msb")
	testenv.Run(t, ctx, dir, env, "sh", "-c", "echo 'FAKE-IMAGE img:1 abc' | msb load --tag img:1")
	if err := os.WriteFile(filepath.Join(dir, "sb.yaml"), []byte("image: img:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	create := testenv.Start(t, dir, env, msb, "create", "img:1", "--name", "vm1", "--conf", "sb.yaml")
	rec := testenv.PollRecord(t, ctx, msb, env, "vm1", create)
	if len(rec) == 0 {
		t.Fatal("empty record")
	}
	if err := create.Interrupt(); err != nil {
		t.Fatal(err)
	}
	if _, _, code := create.Wait(ctx); code == 0 {
		t.Fatal("the create of a spinning boot succeeded")
	}
	pids := testenv.Machines("vm1", home)
	if len(pids) != 1 {
		t.Fatalf("after the create ended, machines %v; the stand-in's spin must outlive it, as msb's does", pids)
	}
	if len(testenv.Machines("vm1", filepath.Join(dir, "other-home"))) != 0 {
		t.Error("a machine of another MSB_HOME was taken for this one's")
	}
	_ = syscall.Kill(pids[0], syscall.SIGTERM)
	testenv.NoMachineLeft(t, "vm1", home)
	if ctx.Err() != nil {
		t.Fatal("the helpers waited for the boot")
	}
}
