package testenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	code := m.Run()
	StopDocker()
	os.Exit(code)
}

// recorder is a testing.TB that records Skipf and Fatalf instead of ending
// the goroutine.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper()                   {}
func (r *recorder) Skipf(f string, a ...any)  { r.skipped = fmt.Sprintf(f, a...) }
func (r *recorder) Fatalf(f string, a ...any) { r.failed = fmt.Sprintf(f, a...) }
func (r *recorder) String() string            { return "skip=" + r.skipped + " fail=" + r.failed }
func (r *recorder) reset()                    { r.skipped, r.failed = "", "" }
func newRecorder(t *testing.T) *recorder      { return &recorder{TB: t} }

func TestUnavailablePolicy(t *testing.T) {
	t.Setenv(EnvCI, "true")
	r := newRecorder(t)
	Unavailable(r, "msb not found", "run make tools")
	if r.skipped != "" || !strings.Contains(r.failed, "msb not found: run make tools") || !strings.Contains(r.failed, "CI=true") {
		t.Errorf("CI=true: %s, want a failure naming the reason, the fix and CI", r)
	}
	t.Setenv(EnvCI, "")
	r.reset()
	Unavailable(r, "msb not found", "run make tools")
	if r.failed != "" || r.skipped != "msb not found: run make tools" {
		t.Errorf("CI unset: %s, want a skip with the reason and the fix", r)
	}
}

func TestSkipRealTools(t *testing.T) {
	t.Setenv(EnvSkip, "1")
	t.Setenv(EnvCI, "true") // skipping wins even in CI: make test-fast
	for name, f := range map[string]func(testing.TB){
		"MSB":     func(tb testing.TB) { MSB(tb) },
		"Podman":  func(tb testing.TB) { Podman(tb) },
		"Docker":  func(tb testing.TB) { Docker(tb) },
		"Busybox": func(tb testing.TB) { BusyboxPath(tb) },
	} {
		r := newRecorder(t)
		f(r) // each helper returns right after the (recorded) skip
		if !strings.Contains(r.skipped, EnvSkip+"=1") {
			t.Errorf("%s with %s=1: %s, want a skip", name, EnvSkip, r)
		}
	}
}

func TestMSBNotFound(t *testing.T) {
	t.Setenv(EnvSkip, "")
	t.Setenv(EnvCI, "true")
	t.Setenv(EnvToolsDir, t.TempDir())
	t.Setenv("PATH", t.TempDir())
	r := newRecorder(t)
	MSB(r)
	if !strings.Contains(r.failed, "msb not found") || !strings.Contains(r.failed, "make tools") {
		t.Errorf("no msb anywhere, CI=true: %s", r)
	}
}

func TestMSBWrongVersion(t *testing.T) {
	t.Setenv(EnvSkip, "")
	t.Setenv(EnvCI, "")
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	fake := filepath.Join(dir, "bin", "msb")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho msb 0.6.0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvToolsDir, dir)
	r := newRecorder(t)
	MSB(r)
	if !strings.Contains(r.skipped, `"msb 0.6.0", want msb 0.7.2`) {
		t.Errorf("msb 0.6.0 in ASB_TOOLS_DIR: %s, want a skip naming both versions", r)
	}
}

func TestWithEnv(t *testing.T) {
	got := WithEnv([]string{"A=1", "PATH=/bin", "B=2", "PATH=/usr/bin"}, "PATH=/x", "C=3")
	want := []string{"A=1", "B=2", "PATH=/x", "C=3"}
	if !slices.Equal(got, want) {
		t.Errorf("WithEnv = %q, want %q", got, want)
	}
}

func TestCheckStatic(t *testing.T) {
	if err := checkStatic("/bin/sh"); err == nil || !strings.Contains(err.Error(), "dynamically linked") {
		// /bin/sh is dynamic on every Debian; a static one would be odd.
		t.Errorf("checkStatic(/bin/sh) = %v, want 'dynamically linked'", err)
	}
	if err := checkStatic("/etc/passwd"); err == nil {
		t.Error("checkStatic(/etc/passwd) = nil, want an ELF error")
	}
}

func TestBusyboxContext(t *testing.T) {
	dir := BusyboxContext(t)
	df, err := os.ReadFile(filepath.Join(dir, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"FROM scratch", "COPY rootfs/ /", "busybox --install -s /bin", "/workspace", "/home/dev", "chmod 1777 /tmp"} {
		if !strings.Contains(string(df), want) {
			t.Errorf("Dockerfile lacks %q:\n%s", want, df)
		}
	}
	passwd, _ := os.ReadFile(filepath.Join(dir, "rootfs/etc/passwd"))
	if !strings.Contains(string(passwd), "dev:x:1000:1000:dev:/home/dev:") || !strings.HasPrefix(string(passwd), "root:x:0:0:") {
		t.Errorf("passwd = %q", passwd)
	}
	if err := checkStatic(filepath.Join(dir, "rootfs/bin/busybox")); err != nil {
		t.Error(err)
	}
}

// busyboxImageWorks builds BusyboxContext with argv (a builder prefix plus
// "build" and its flags) and checks the image runs busybox as dev.
func TestRealPodmanBuild(t *testing.T) {
	podman := Podman(t)
	ctxDir := BusyboxContext(t)
	ctx := context.Background()
	start := time.Now()
	build := append(append(append([]string{}, podman...), "build"), PodmanBuildArgs()...)
	Run(t, ctx, ctxDir, nil, append(build, "-q", "-t", "localhost/testenv:busybox", ".")...)
	t.Logf("podman build: %v", time.Since(start).Round(time.Millisecond))
	out := Run(t, ctx, ctxDir, nil, append(podman, "image", "inspect", "--format", "{{.Os}}", "localhost/testenv:busybox")...)
	if strings.TrimSpace(string(out)) != "linux" {
		t.Errorf("image inspect: %q", out)
	}
	// The state stays under the test's temp dir: the default store is untouched.
	if !slices.Contains(podman, "--root") || !strings.HasPrefix(podman[slices.Index(podman, "--root")+1], os.TempDir()) {
		t.Errorf("podman argv %q does not keep its store in a temp dir", podman)
	}
}

func TestRealDockerBuild(t *testing.T) {
	docker, env := Docker(t)
	ctxDir := BusyboxContext(t)
	ctx := context.Background()
	start := time.Now()
	Run(t, ctx, ctxDir, env, docker, "build", "-q", "-t", "testenv:busybox", ".")
	t.Logf("docker build: %v", time.Since(start).Round(time.Millisecond))
	out := Run(t, ctx, ctxDir, env, docker, "image", "inspect", "--format", "{{.Os}}", "testenv:busybox")
	if strings.TrimSpace(string(out)) != "linux" {
		t.Errorf("image inspect: %q", out)
	}
	// A second caller gets the same daemon.
	_, env2 := Docker(t)
	if !slices.Equal(env, env2) {
		t.Error("a second Docker call started another daemon")
	}
	if !slices.ContainsFunc(env, func(s string) bool { return strings.HasPrefix(s, "DOCKER_HOST=unix://"+os.TempDir()) }) {
		t.Errorf("env has no private DOCKER_HOST")
	}
}

func TestRealMSBLoad(t *testing.T) {
	msb := MSB(t)
	env := MSBEnv(t)
	podman := Podman(t)
	ctxDir := BusyboxContext(t)
	ctx := context.Background()
	build := append(append(append([]string{}, podman...), "build"), PodmanBuildArgs()...)
	Run(t, ctx, ctxDir, nil, append(build, "-q", "-t", "localhost/testenv:load", ".")...)
	tar := Run(t, ctx, ctxDir, nil, append(podman, "save", "localhost/testenv:load")...)
	if _, stderr, err := RunErr(ctx, ctxDir, env, tar, msb, "load", "--quiet", "--tag", "testenv:load"); err != nil {
		t.Fatalf("msb load: %v\n%s", err, stderr)
	}
	out := Run(t, ctx, ctxDir, env, msb, "image", "ls", "-q")
	if !strings.Contains(string(out), "testenv:load") {
		t.Errorf("msb image ls -q = %q, want testenv:load", out)
	}
}
