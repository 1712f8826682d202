package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ptyrun, sent SIGTERM (a step's timeout), hangs its command's terminal up
// as a closed window does, and kills what is left of the command's group
// once the grace has passed: nothing it ran outlives it (before, it died
// alone and left asb task agent attached to the VM).
func TestPtyrunHangsUpOnATimeout(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "ptyrun")
	if out, err := exec.Command("go", "build", "-o", bin, "./ptyrun").CombinedOutput(); err != nil {
		t.Fatalf("go build ptyrun: %v\n%s", err, out)
	}
	for i, c := range []struct {
		name, script, says string
		hup                bool
	}{
		{"a command that ends on SIGHUP", `trap 'echo hup >"$MARK"; exit 1' HUP; echo started; while :; do sleep 0.1; done`, "hung up the terminal", true},
		{"a command that ignores it", `trap '' HUP TERM; echo started; sleep 60 & echo $! >"$MARK.pid"; wait`, "killed its process group", false},
	} {
		mark := filepath.Join(dir, fmt.Sprint("hup", i))
		cmd := exec.Command(bin, "sh", "-c", c.script)
		cmd.Env = append(os.Environ(), "PTYRUN_GRACE=1", "MARK="+mark)
		var out, errOut strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 100 && !strings.Contains(out.String(), "started"); i++ {
			time.Sleep(50 * time.Millisecond)
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if !strings.Contains(errOut.String(), c.says) {
			t.Errorf("%s: ptyrun said %q, want %q", c.name, errOut.String(), c.says)
		}
		if _, err := os.Stat(mark); (err == nil) != c.hup {
			t.Errorf("%s: got SIGHUP: %v, want %v", c.name, err == nil, c.hup)
		}
		if raw, err := os.ReadFile(mark + ".pid"); err == nil {
			pid := strings.TrimSpace(string(raw))
			if st := stillRunning(pid); st != "" {
				t.Errorf("%s: its background process %s outlived ptyrun: %s", c.name, pid, st)
			}
		}
	}
}

// stillRunning is /proc/PID/stat while the process is neither gone nor a
// zombie, within 5 s: a SIGKILL takes effect when the process is next
// scheduled, which on a loaded machine is after ptyrun has exited.
func stillRunning(pid string) string {
	var st []byte
	for range 50 {
		var err error
		if st, err = os.ReadFile("/proc/" + pid + "/stat"); err != nil || strings.Contains(string(st), ") Z ") {
			return ""
		}
		time.Sleep(100 * time.Millisecond)
	}
	return string(st)
}
