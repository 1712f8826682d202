package testenv_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// StartPolling makes a create that msb's own database refused
// (testenv.MSBRecordRace) once more, start(true), after msb removes what it
// left, and returns the second's record; a create that ended otherwise
// without a record, or refused twice, is an error that quotes what it
// said (ci49 of 2026-12-06 failed a preset's create with only msb
// inspect's "sandbox not found").
func TestStartPollingRetriesOnlyMSBsRecordRace(t *testing.T) {
	for _, c := range []struct {
		fails            []string
		want             string
		creates, removes int
	}{
		{[]string{"race", "ok"}, `{"status": "Starting"}`, 2, 1},
		{[]string{"ok"}, `{"status": "Starting"}`, 1, 0},
		{[]string{"other"}, "something else", 1, 0},
		{[]string{"race", "race"}, "FOREIGN KEY constraint failed", 2, 1},
	} {
		data := t.TempDir()
		m, err := fakes.NewRaceMSB(data, c.fails, true)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		p, raw, err := testenv.StartPolling(t, ctx, m.Bin, m.Env, "vm", func(retry bool) *testenv.Proc {
			argv := []string{m.Bin, "create", "vm"}
			if retry {
				argv = append(argv, "--replace") // the stand-in refuses a second create without it
			}
			return testenv.Start(t, data, m.Env, argv...)
		})
		got := string(raw)
		if err != nil {
			got = err.Error()
		}
		if p != nil {
			_ = p.Kill()
		}
		cancel()
		if !strings.Contains(got, c.want) || m.Creates() != c.creates || m.Removes() != c.removes {
			t.Errorf("creates failing as %q: got %q after %d creates and %d removes; want %q after %d and %d",
				c.fails, got, m.Creates(), m.Removes(), c.want, c.creates, c.removes)
		}
		if err != nil && !strings.Contains(got, "the create ("+m.Bin+" create vm") {
			t.Errorf("the error does not name the create: %s", got)
		}
	}
}

// CreateVM goes on with the second create's record after msb's own
// database refused the first (StartPolling), and fails the test with
// what a create said when it ended otherwise. The stand-in ends a create
// at Ctrl-C with 130, as asb does.
func TestCreateVMRetriesOnlyMSBsRecordRace(t *testing.T) {
	if testenv.CanBoot() {
		t.Skip("where the host can boot, CreateVM waits for the create's end, and a refused create fails it")
	}
	for _, c := range []struct {
		fails   []string
		want    string
		creates int
		ok      bool
	}{
		{[]string{"race", "ok"}, "Starting", 2, true},
		{[]string{"other"}, "something else", 1, false},
	} {
		data := t.TempDir()
		m, err := fakes.NewRaceMSB(data, c.fails, false)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		var r testenv.VMRun
		rec := &recorder{TB: t}
		func() {
			defer func() { _ = recover() }() // a Fatal of the recorder ends the create here
			r = testenv.CreateVM(rec, ctx, func() *testenv.Proc { return testenv.Start(t, data, m.Env, m.Bin, "create", "vm") }, m.Bin, m.Env, "vm", data)
		}()
		cancel()
		got := r.Status
		if rec.failed != "" {
			got = rec.failed
		}
		if (rec.failed == "") != c.ok || !strings.Contains(got, c.want) || m.Creates() != c.creates {
			t.Errorf("creates failing as %q: got %q (failed: %v) after %d creates; want %q after %d", c.fails, got, rec.failed != "", m.Creates(), c.want, c.creates)
		}
	}
}

// recorder is a testing.TB whose Fatalf records the failure and panics
// (recovered by the caller) instead of ending the test.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper()                      {}
func (r *recorder) Logf(string, ...any)          {}
func (r *recorder) Fatal(args ...any)            { r.failed = fmt.Sprint(args...); panic(r) }
func (r *recorder) Fatalf(f string, args ...any) { r.failed = fmt.Sprintf(f, args...); panic(r) }
