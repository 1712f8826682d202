package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// dockerd is the one private Docker daemon of a test binary.
//
// This is the package's only mutable package-level state, and it cannot be
// avoided: a daemon takes seconds to start, so all tests of one binary share
// one, and its lifetime is the process's, not any test's. The mutex guards
// the fields; once a start failed, every later caller gets the same error.
var dockerd struct {
	mu      sync.Mutex
	started bool
	err     error
	dir     string        // temp dir holding data root, exec root, socket, log
	cmd     *exec.Cmd     // the daemon
	done    chan error    // its exit status
	release chan struct{} // lets the thread that forked the daemon exit
	bin     string        // docker CLI
	env     []string
}

// Docker starts one dockerd per test binary (on first use) with a private
// socket, data root and exec root under a temp dir, waits until `docker
// version` answers, and returns the docker CLI and an environment whose
// DOCKER_HOST points at it. The daemon has no bridge and no iptables rules:
// it changes nothing of the host's network, and uses the vfs storage driver.
//
// Stopping it: the test binary's TestMain should call StopDocker after
// m.Run. As a safety net the daemon gets SIGTERM from the kernel when the
// test binary dies (PR_SET_PDEATHSIG, on a thread kept alive for that), so a
// binary killed by -timeout leaves no daemon behind either.
func Docker(t testing.TB) (bin string, env []string) {
	t.Helper()
	if skip(t) {
		return "", nil
	}
	cli, err := lookTool("docker")
	if err != nil {
		Unavailable(t, "docker CLI not found", "run make tools (apt-get install docker.io)")
	}
	daemon, err := lookTool("dockerd")
	if err != nil {
		Unavailable(t, "dockerd not found", "run make tools (apt-get install docker.io)")
	}
	needRoot(t, "dockerd")

	dockerd.mu.Lock()
	defer dockerd.mu.Unlock()
	if !dockerd.started {
		dockerd.started = true
		start := time.Now()
		dockerd.err = startDocker(cli, daemon)
		if dockerd.err == nil {
			t.Logf("testenv: dockerd ready in %v (%s)", time.Since(start).Round(time.Millisecond), dockerd.dir)
		}
	}
	if dockerd.err != nil {
		t.Fatalf("start a private dockerd: %v", dockerd.err)
	}
	return dockerd.bin, append([]string(nil), dockerd.env...)
}

func startDocker(cli, daemon string) error {
	dir, err := os.MkdirTemp("", "dockerd-")
	if err != nil {
		return err
	}
	sock := filepath.Join(dir, "docker.sock")
	logf, err := os.Create(filepath.Join(dir, "dockerd.log"))
	if err != nil {
		_ = os.RemoveAll(dir)
		return err
	}
	defer logf.Close()
	cmd := exec.Command(daemon,
		"--data-root", filepath.Join(dir, "data"),
		"--exec-root", filepath.Join(dir, "exec"),
		"--pidfile", filepath.Join(dir, "dockerd.pid"),
		"-H", "unix://"+sock,
		"--bridge", "none", "--iptables=false", "--ip6tables=false",
		// vfs: no overlay mounts, so nothing stays mounted under the temp
		// dir even when the daemon is killed.
		"--storage-driver", "vfs",
	)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true}

	// PDEATHSIG fires when the forking *thread* exits, so fork from a
	// locked thread that stays alive until StopDocker releases it.
	started := make(chan error, 1)
	release := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		started <- cmd.Start()
		<-release
		runtime.UnlockOSThread()
	}()
	if err := <-started; err != nil {
		close(release)
		_ = os.RemoveAll(dir)
		return fmt.Errorf("%s: %w", daemon, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	dockerd.dir, dockerd.cmd, dockerd.done, dockerd.release = dir, cmd, done, release
	dockerd.bin = cli
	dockerd.env = withEnv(os.Environ(),
		"DOCKER_HOST=unix://"+sock,
		"DOCKER_CONFIG="+filepath.Join(dir, "config"), // no ~/.docker credential helpers or contexts
	)

	deadline := time.Now().Add(60 * time.Second)
	var last []byte
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			done <- err
			log, _ := os.ReadFile(filepath.Join(dir, "dockerd.log"))
			stopDockerLocked()
			return fmt.Errorf("dockerd exited (%v): %s", err, tail(string(log), 10))
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		out, _, err := RunErr(ctx, "", dockerd.env, nil, cli, "version", "--format", "{{.Server.Version}}")
		cancel()
		if err == nil && len(strings.TrimSpace(string(out))) > 0 {
			return nil
		}
		last = out
		time.Sleep(100 * time.Millisecond)
	}
	log, _ := os.ReadFile(filepath.Join(dir, "dockerd.log"))
	stopDockerLocked()
	return fmt.Errorf("docker version did not answer within 60s (%s); dockerd log: %s", strings.TrimSpace(string(last)), tail(string(log), 10))
}

// StopDocker stops the daemon Docker started, if any (SIGTERM to its PID,
// SIGKILL after 15 s), and removes its temp dir. Call it from TestMain
// after m.Run; it is safe to call when no daemon was started, and twice.
func StopDocker() {
	dockerd.mu.Lock()
	defer dockerd.mu.Unlock()
	stopDockerLocked()
}

func stopDockerLocked() {
	if dockerd.cmd == nil {
		return
	}
	p := dockerd.cmd.Process
	_ = p.Signal(syscall.SIGTERM)
	select {
	case <-dockerd.done:
	case <-time.After(15 * time.Second):
		// The whole process group: dockerd and the containerd it spawned.
		_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
		<-dockerd.done
	}
	close(dockerd.release)
	_ = os.RemoveAll(dockerd.dir)
	dockerd.cmd, dockerd.done, dockerd.release = nil, nil, nil
	if dockerd.err == nil {
		dockerd.err = errors.New("the private dockerd was stopped (StopDocker)")
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
