package proc

import (
	"bufio"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperEnv makes this test binary one of the test's processes.
const helperEnv = "ASB_PROC_TEST_HELPER"

func init() {
	switch os.Getenv(helperEnv) {
	case "parent":
		// Starts the child as asb serve starts asb task, says its pid,
		// and waits to be killed.
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), helperEnv+"=child")
		cmd.Stderr = os.Stderr
		EndWithParent(cmd)
		if err := cmd.Start(); err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString(strconv.Itoa(cmd.Process.Pid) + "\n")
		time.Sleep(time.Hour)
		os.Exit(5)
	case "child":
		// Execs from a thread other than the main one, as asb task
		// execs asb-task from wherever its goroutine runs.
		runtime.LockOSThread() // the main goroutine keeps the main thread
		done := make(chan error)
		go func() { done <- Exec("/bin/sleep", []string{"sleep", "60"}, os.Environ()) }()
		<-done
		os.Exit(4)
	}
}

// TestExecKeepsTheParentDeathSignal: a process started to end with its
// parent, which then execs another program from a thread other than its
// main one, still ends when that parent is killed with -9.
func TestExecKeepsTheParentDeathSignal(t *testing.T) {
	if _, err := os.Stat("/bin/sleep"); err != nil {
		t.Skip("no /bin/sleep")
	}
	parent, child := startHelper(t, "parent")
	waitFor(t, "the child to exec sleep", func() bool { return strings.HasPrefix(cmdline(child), "sleep\x00") })
	if err := parent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	waitFor(t, "the child (sleep) to end after its parent was killed", func() bool { return ended(child) })
}

// startHelper starts this test binary as the helper role (its init), and
// returns it with the pid it printed first. The test's end kills both.
func startHelper(t *testing.T, role string) (*exec.Cmd, int) {
	t.Helper()
	parent := exec.Command(os.Args[0], "-test.run=^$")
	parent.Env = append(os.Environ(), helperEnv+"="+role)
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = parent.Process.Kill(); _ = parent.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the helper (%s) said no pid: %v", role, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("the helper (%s) said %q, not a pid", role, line)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	return parent, pid
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10 s for %s", what)
		}
	}
}

func cmdline(pid int) string {
	raw, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return string(raw)
}

// ended: no such process, or a zombie its new parent has yet to reap.
func ended(pid int) bool {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}
