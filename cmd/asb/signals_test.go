package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/internal/testkit/fakehost"
	"github.com/agents-sandbox/asb/internal/testkit/fakes"
	"github.com/agents-sandbox/asb/internal/testkit/testenv"
)

// slowGit is a stand-in git whose clone runs until it is ended, as one
// from a slow remote: while it runs it holds a lock file, which it removes
// on SIGTERM or SIGINT (git removes its own so), and it has started a
// helper (as git starts git-remote-https) that holds its standard error
// and, as a shell's background job, ignores the terminal's SIGINT. Every
// other git command is the real git's.
const slowGit = `#!/bin/sh
d=$(dirname "$0")
case " $* " in *" clone "*) ;; *) exec "$REAL_GIT" "$@" ;; esac
echo $$ >> "$d/pids"
touch "$d/git.lock"
sleep 60 >/dev/null 2>&1 &
w=$!
echo $w >> "$d/pids"
trap 'rm -f "$d/git.lock"; kill $w; exit 143' TERM INT
sleep 60 &
echo $! >> "$d/pids"
touch "$d/cloning"
wait $w
`

// TestEndedInitLeavesNothing ends `asb init --workspace URL` during its
// clone, as a supervisor does (SIGTERM to asb alone), as Ctrl-C does
// (SIGINT to the whole group) and as a closed terminal does (SIGHUP): asb ends without waiting on the helper the
// clone left, its git was asked to end (its lock file is gone, where a
// SIGKILL left it), and neither the folder nor the clone's staging folder
// is left.
func TestEndedInitLeavesNothing(t *testing.T) {
	testenv.Slow(t)
	asb := testenv.BuildAsb(t)
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	for _, c := range []struct {
		name string
		end  func(*testenv.Proc) error
	}{
		{"SIGTERM to asb", func(p *testenv.Proc) error { return p.Signal(syscall.SIGTERM) }},
		{"Ctrl-C to the group", (*testenv.Proc).Interrupt},
		{"SIGHUP to asb (its terminal closed)", func(p *testenv.Proc) error { return p.Signal(syscall.SIGHUP) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			bin := t.TempDir()
			if err := os.WriteFile(filepath.Join(bin, "git"), []byte(slowGit), 0o755); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { killListed(filepath.Join(bin, "pids")) })
			work := t.TempDir()
			env := append(os.Environ(), "REAL_GIT="+realGit, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			p := testenv.Start(t, work, env, asb, "init", "--agent", "opencode", "--workspace", "https://example.com/app.git", "outer")
			waitForFile(t, p, filepath.Join(bin, "cloning"))
			if err := c.end(p); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, errOut, code := p.Wait(ctx)
			if code == -1 {
				t.Fatalf("asb did not end within 10 s\n%s", errOut)
			}
			if code == 0 {
				t.Errorf("an ended init exited 0\n%s", errOut)
			}
			if _, err := os.Stat(filepath.Join(bin, "git.lock")); err == nil {
				t.Errorf("git's lock file is left: git was killed, not asked to end\n%s", errOut)
			}
			if left, _ := filepath.Glob(filepath.Join(work, "*")); len(left) > 0 {
				t.Errorf("left in the folder: %q", left)
			}
			if left, _ := filepath.Glob(filepath.Join(work, ".asb-clone*")); len(left) > 0 {
				t.Errorf("the clone's staging folder is left: %q", left)
			}
		})
	}
}

// TestEndedServeEndsItsBoot stops `asb serve` as a supervisor does
// (SIGTERM to asb alone) while the VM it starts boots and spins, as on a
// host with /dev/kvm but no CPU virtualization: the `asb task vm:start`
// that serve runs is asked to end, not killed, so it ends the boot (the
// Taskfile's reap-boot) and no msb machine process is left spinning.
// (Killed, it left msb create and its machine running for the boot's 10
// minutes.)
func TestEndedServeEndsItsBoot(t *testing.T) {
	testenv.Slow(t)
	p, msbHome := startBootingServe(t)
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, errOut, code := p.Wait(ctx)
	if ctx.Err() != nil {
		t.Fatalf("asb serve did not end within 30 s\n%s", errOut)
	}
	testenv.NoMachineLeft(t, "", msbHome)
	if t.Failed() {
		t.Logf("asb serve: exit %d\n%s", code, errOut)
	}
}

// TestKilledServeEndsItsBoot kills `asb serve` with -9 while the VM it
// starts boots and spins: its `asb task vm:start`, by then asb-task, is
// asked to end by the kernel (serve starts it so), ends the boot as at
// serve's SIGTERM, and no msb machine is left. (Before, asb task exec'd
// asb-task from a thread the kernel keeps no parent-death signal for, and
// both ran on with the boot.)
func TestKilledServeEndsItsBoot(t *testing.T) {
	testenv.Slow(t)
	p, msbHome := startBootingServe(t)
	if err := p.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_, errOut, _ := p.Wait(context.Background())
	testenv.NoMachineLeftWithin(t, "", msbHome, 30*time.Second)
	if t.Failed() {
		t.Logf("asb serve, killed with -9, had printed:\n%s", errOut)
	}
}

// startBootingServe starts `asb serve` in a new folder, with the stand-ins
// and a boot that spins, and returns once msb has the VM's record,
// Starting (the stand-in starts its machine first, as msb does).
func startBootingServe(t *testing.T) (p *testenv.Proc, msbHome string) {
	t.Helper()
	tools, err := testenv.ScriptTools()
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	bin, state := filepath.Join(work, "bin"), filepath.Join(work, "state")
	msbHome = filepath.Join(work, "msb")
	if err := fakes.Link(filepath.Join(tools, "fake"), bin); err != nil {
		t.Fatal(err)
	}
	testenv.KillMachinesAtCleanup(t, msbHome)
	env := append(os.Environ(), "HOME="+work, "XDG_CONFIG_HOME="+filepath.Join(work, ".config"),
		"MSB_HOME="+msbHome, fakes.StateEnv+"="+state, fakes.BootEnv+"=spin",
		fakehost.ShapeEnv+"=can-boot", "OPENCODE_API_KEY=k",
		"PATH="+bin+string(os.PathListSeparator)+tools+string(os.PathListSeparator)+os.Getenv("PATH"))
	asb := filepath.Join(tools, "asb")
	initCmd := exec.Command(asb, "init", "--agent", "opencode", "--no-git", "proj")
	initCmd.Dir, initCmd.Env = work, env
	if out, err := initCmd.CombinedOutput(); err != nil {
		t.Fatalf("asb init: %v\n%s", err, out)
	}
	p = testenv.Start(t, filepath.Join(work, "proj"), env, asb, "serve")
	for deadline := time.Now().Add(60 * time.Second); !booting(state, msbHome); {
		select {
		case <-p.Done():
			_, errOut, code := p.Wait(context.Background())
			t.Fatalf("serve ended before the boot: exit %d\n%s", code, errOut)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the boot never started")
		}
	}
	return p, msbHome
}

// booting reports whether an msb machine of msbHome runs and the
// stand-in's record of its VM says Starting.
func booting(state, msbHome string) bool {
	for _, pid := range testenv.Machines("", msbHome) {
		raw, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		argv := strings.Split(string(raw), "\x00")
		for i, a := range argv[:max(len(argv)-1, 0)] {
			if a == "--name" {
				if rec, err := fakes.VM(state, argv[i+1]); err == nil && rec.Status == "Starting" {
					return true
				}
			}
		}
	}
	return false
}

// waitForFile waits until path exists; the run must not end first.
func waitForFile(t *testing.T, p *testenv.Proc, path string) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		select {
		case <-p.Done():
			_, errOut, code := p.Wait(context.Background())
			t.Fatalf("the run ended first: exit %d\n%s", code, errOut)
		case <-deadline:
			t.Fatalf("%s never appeared", path)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// killListed kills the processes whose pids the file lists, one a line.
func killListed(file string) {
	raw, _ := os.ReadFile(file)
	for _, f := range strings.Fields(string(raw)) {
		if pid, err := strconv.Atoi(f); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
