package testenv_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
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

// CreateVM makes a create that msb's own database refused
// (testenv.MSBRecordRace) once more, after msb removes what it left, and
// goes on with the second's record; a create that ended otherwise without
// a record fails the test with what it said (ci49 of 2026-12-06 failed a
// preset's create with only msb inspect's "sandbox not found"). The
// stand-in fails its creates as $DATA/fail says, one word a create, and
// ends at Ctrl-C with 130 as asb does.
func TestCreateVMRetriesOnlyMSBsRecordRace(t *testing.T) {
	if testenv.CanBoot() {
		t.Skip("where the host can boot, CreateVM waits for the create's end, and a refused create fails it")
	}
	msb := `case "$1" in
create) n=$(($(cat "$DATA/n" 2>/dev/null || echo 0) + 1)); echo $n >"$DATA/n"
	case $(sed -n "${n}p" "$DATA/fail") in
	race) echo '  → config: insert run: Query Error: error returned from database: (code: 787) FOREIGN KEY constraint failed' >&2; exit 1 ;;
	other) echo 'error: something else' >&2; exit 1 ;;
	esac
	trap 'rm -f "$DATA/flight"; exit 130' INT
	: >"$DATA/flight"; sleep 30 & wait ;;
inspect) [ -e "$DATA/flight" ] || { echo "error: sandbox not found: $2" >&2; exit 1; }; echo '{"status": "Starting"}' ;;
remove) echo "$*" >>"$DATA/removed" ;;
esac
`
	for _, c := range []struct {
		fail, want string
		creates    int
		ok         bool
	}{
		{"race\nok\n", "Starting", 2, true},
		{"ok\n", "Starting", 1, true},
		{"other\n", "something else", 1, false},
		{"race\nrace\n", "FOREIGN KEY constraint failed", 2, false},
	} {
		data := t.TempDir()
		bin := filepath.Join(data, "msb")
		if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+msb), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(data, "fail"), []byte(c.fail), 0o644); err != nil {
			t.Fatal(err)
		}
		env := append(os.Environ(), "DATA="+data)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		var r testenv.VMRun
		rec := &recorder{TB: t}
		func() {
			defer func() { _ = recover() }() // a Fatalf of the recorder ends the create here
			r = testenv.CreateVM(rec, ctx, func() *testenv.Proc { return testenv.Start(t, data, env, bin, "create", "vm") }, bin, env, "vm", data)
		}()
		cancel()
		n, _ := os.ReadFile(filepath.Join(data, "n"))
		got := r.Status
		if rec.failed != "" {
			got = rec.failed
		}
		if (rec.failed == "") != c.ok || !strings.Contains(got, c.want) || strings.TrimSpace(string(n)) != strconv.Itoa(c.creates) {
			t.Errorf("creates failing as %q: got %q (failed: %v) after %s creates; want %q after %d", c.fail, got, rec.failed != "", strings.TrimSpace(string(n)), c.want, c.creates)
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
