package runner

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// The agent of a warm run is asb's child: its exit code comes back, and a
// SIGTERM sent to asb reaches it (asb itself waits, and survives it).
func TestRunForeground(t *testing.T) {
	var st *ExitStatusError
	if err := RunForeground([]string{"sh", "-c", "exit 3"}, os.Environ(), t.TempDir()); !errors.As(err, &st) || st.Code != 3 {
		t.Fatalf("exit 3: got %v", err)
	}
	if err := RunForeground([]string{"true"}, os.Environ(), t.TempDir()); err != nil {
		t.Fatalf("true: %v", err)
	}
	marker := filepath.Join(t.TempDir(), "started")
	done := make(chan error, 1)
	go func() {
		done <- RunForeground([]string{"sh", "-c", "touch " + marker + "; exec sleep 30"}, os.Environ(), t.TempDir())
	}()
	for i := 0; ; i++ {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if i > 200 {
			t.Fatal("the child never started")
		}
		time.Sleep(25 * time.Millisecond)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.As(err, &st) || st.Code != 128+int(syscall.SIGTERM) {
			t.Fatalf("after SIGTERM: got %v, want the child killed by it", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("SIGTERM did not reach the child")
	}
}
