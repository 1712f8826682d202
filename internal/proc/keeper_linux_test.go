package proc

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func init() {
	if os.Getenv(helperEnv) == "group-parent" {
		// Starts a group as asb starts mmdebstrap: its program starts a
		// child of its own and says that child's pid. Then waits to be
		// killed.
		cmd := Group(context.Background(), "sh", "-c", "sleep 300 & echo $!; wait")
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Start(); err != nil {
			os.Exit(3)
		}
		time.Sleep(time.Hour)
		os.Exit(5)
	}
}

// TestGroupEndsWithAsb: when asb is killed with -9, the whole group it
// started ends, not only the process it started (mmdebstrap's apt and
// dpkg ran on before the keeper).
func TestGroupEndsWithAsb(t *testing.T) {
	parent, grandchild := startHelper(t, "group-parent")
	if err := parent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	waitFor(t, "the group's grandchild (sleep) to end after asb was killed", func() bool { return ended(grandchild) })
}

// TestGroupPassesThrough: through the keeper, the program reads asb's
// input, writes its output and error, and its exit status is its own.
func TestGroupPassesThrough(t *testing.T) {
	cmd := Group(context.Background(), "sh", "-c", "cat; echo err >&2; exit 7")
	cmd.Stdin = strings.NewReader("in\n")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Fatalf("exit: %v, want status 7", err)
	}
	if stdout.String() != "in\n" || stderr.String() != "err\n" {
		t.Fatalf("stdout %q, stderr %q; want %q and %q", stdout.String(), stderr.String(), "in\n", "err\n")
	}
	if cmd.Args[1] != keeperArg {
		t.Fatalf("no keeper heads the group: %q", cmd.Args)
	}
}

// TestGroupCancelEndsTheGroup: a cancelled run (a Ctrl-C to asb) ends the
// whole group, a child that ignores SIGTERM included, within Grace.
func TestGroupCancelEndsTheGroup(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := Group(ctx, "sh", "-c", "sh -c 'trap \"\" TERM; echo $$; while :; do sleep 1; done' & wait")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the group's program said no pid: %v", err)
	}
	stubborn, _ := strconv.Atoi(strings.TrimSpace(line))
	defer func() { _ = syscall.Kill(stubborn, syscall.SIGKILL) }()
	cancel()
	_ = cmd.Wait()
	waitFor(t, "the child that ignores SIGTERM to be killed", func() bool { return ended(stubborn) })
}

func TestGroupMissingProgram(t *testing.T) {
	cmd := Group(context.Background(), "asb-no-such-program")
	if err := cmd.Run(); !errors.Is(err, exec.ErrNotFound) {
		t.Fatalf("Run: %v, want exec.ErrNotFound", err)
	}
}

// TestGroupEndsWhatTheProgramLeft: a program that ends leaving a child of
// its own running leaves nothing once its run is over.
func TestGroupEndsWhatTheProgramLeft(t *testing.T) {
	cmd := Group(context.Background(), "sh", "-c", "sleep 300 & echo $!")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	left, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	if left == 0 {
		t.Fatalf("the program said no pid: %q", out)
	}
	defer func() { _ = syscall.Kill(left, syscall.SIGKILL) }()
	waitFor(t, "the child the program left (sleep) to end", func() bool { return ended(left) })
}
