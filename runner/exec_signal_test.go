package runner

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// standIn is a tool that runs until it is ended, as git fetch or msb
// remove on a slow host: it holds a lock file while it runs, which it
// removes on SIGTERM (git removes its index.lock so); as its last
// argument says, it ignores SIGTERM ("ignore") or leaves a process behind
// that holds its standard output and error ("leave", as a helper that git
// started would).
const standIn = `#!/bin/sh
d=$(dirname "$0")
for m; do :; done
touch "$d/tool.lock"
sleep 60 >/dev/null 2>&1 &
w=$!
echo $w >> "$d/pids"
trap 'rm -f "$d/tool.lock"; kill $w; exit 143' TERM
[ "$m" = ignore ] && trap '' TERM
if [ "$m" = leave ]; then sleep 60 & echo $! >> "$d/pids"; fi
touch "$d/ready"
wait
wait
`

// startStandIn writes the stand-in into a folder of its own and returns
// its path; the test's cleanup kills every process it started.
func startStandIn(t *testing.T) (tool string) {
	t.Helper()
	dir := t.TempDir()
	tool = filepath.Join(dir, "tool")
	if err := os.WriteFile(tool, []byte(standIn), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		raw, _ := os.ReadFile(filepath.Join(dir, "pids"))
		for _, f := range strings.Fields(string(raw)) {
			if pid, err := strconv.Atoi(f); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	return tool
}

// runCancelled runs the stand-in through run and cancels its context
// once the stand-in is running, as asb's context is at a Ctrl-C or a
// SIGTERM; it fails the test when run has not returned 10 s later.
func runCancelled(t *testing.T, tool string, run func(ctx context.Context) error) error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	ready := filepath.Join(filepath.Dir(tool), "ready")
	for {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the tool ended before it was ready: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	cancel()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the tool's run did not return within 10 s of its context's end")
		return nil
	}
}

// The tools asb runs end as at a Ctrl-C when asb's context ends: asked
// with SIGTERM (so that git removes its lock files), killed when they do
// not end, and their run returns even when a process they left behind
// holds their output. Through both doors of runner: Output and Git
// (git runs through hostgit.Command).
func TestCancelledToolsEnd(t *testing.T) {
	doors := map[string]func(ctx context.Context, tool, mode string) error{
		"Output": func(ctx context.Context, tool, mode string) error {
			_, err := Output(ctx, "", tool, mode)
			return err
		},
		"Git": func(ctx context.Context, tool, mode string) error {
			_, err := Git{Bin: tool}.output(ctx, filepath.Dir(tool), mode)
			return err
		},
	}
	for door, run := range doors {
		modes := []string{"clean", "ignore", "leave"}
		if door == "Git" {
			modes = modes[:1] // the same proc.Command: each of the others costs a Grace
		}
		for _, mode := range modes {
			t.Run(door+"/"+mode, func(t *testing.T) {
				t.Parallel()
				tool := startStandIn(t)
				err := runCancelled(t, tool, func(ctx context.Context) error { return run(ctx, tool, mode) })
				if err == nil {
					t.Fatal("a cancelled run succeeded")
				}
				_, lerr := os.Stat(filepath.Join(filepath.Dir(tool), "tool.lock"))
				if mode != "ignore" && lerr == nil {
					t.Errorf("the tool's lock file is left: it was killed, not asked to end (%v)", err)
				}
			})
		}
	}
}
