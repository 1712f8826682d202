// Package testenv finds and prepares the real host tools (msb, podman,
// docker, a static busybox) for the tests that drive them.
//
// Policy, the same for every helper:
//   - ASB_SKIP_REAL_TOOLS=1 skips every real-tool test (make test-fast).
//   - CI=true makes the real tools mandatory: a missing tool fails the test
//     with the reason and the fix ("msb not found: run make tools").
//   - Otherwise a missing tool skips the test with the same message.
//
// `make tools` (scripts/install-tools.sh) installs everything; the Makefile
// exports ASB_TOOLS_DIR, whose bin/ is searched before PATH.
package testenv

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/host"
)

// MSBVersion is the microsandbox release asb is written against.
const MSBVersion = host.MSBVersion

// Environment variables of the policy.
const (
	EnvSkip     = "ASB_SKIP_REAL_TOOLS" // "1": skip all real-tool tests
	EnvToolsDir = "ASB_TOOLS_DIR"       // where make tools installed them
	EnvCI       = "CI"                  // "true": real tools are required
)

// Required reports whether real tools are mandatory (CI=true).
func Required() bool { return os.Getenv(EnvCI) == "true" }

// Skipped reports whether real-tool tests are turned off.
func Skipped() bool { return os.Getenv(EnvSkip) == "1" }

// Unavailable ends the test because a real tool is not usable: a failure
// in CI, a skip elsewhere. why says what is missing, fix how to get it.
func Unavailable(t testing.TB, why, fix string) {
	t.Helper()
	if Required() {
		t.Fatalf("%s: %s (CI=true requires the real tools)", why, fix)
		return
	}
	t.Skipf("%s: %s", why, fix)
}

// skip skips the test when ASB_SKIP_REAL_TOOLS=1 and reports whether it
// did (for a testing.TB whose Skipf returns, as in this package's tests).
func skip(t testing.TB) bool {
	t.Helper()
	if Skipped() {
		t.Skipf("%s=1: real-tool test skipped", EnvSkip)
		return true
	}
	return false
}

// lookTool finds name in ASB_TOOLS_DIR/bin first, then on PATH, and returns
// its absolute path (symlinks kept: msb finds its libkrunfw through them).
func lookTool(name string) (string, error) {
	if dir := os.Getenv(EnvToolsDir); dir != "" {
		p := filepath.Join(dir, "bin", name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return filepath.Abs(p)
		}
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", err
	}
	return filepath.Abs(p)
}

// MSB returns the absolute path of the real msb, checked to be MSBVersion.
func MSB(t testing.TB) string {
	t.Helper()
	if skip(t) {
		return ""
	}
	p, err := lookTool("msb")
	if err != nil {
		Unavailable(t, "msb not found in $ASB_TOOLS_DIR/bin nor on PATH", "run make tools")
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, p, "--version").CombinedOutput()
	got := strings.TrimSpace(string(out))
	if err != nil {
		Unavailable(t, fmt.Sprintf("%s --version failed (%v): %s", p, err, got),
			"msb must stay next to ../lib/libkrunfw.so.*; run make tools")
	}
	if got != "msb "+MSBVersion {
		Unavailable(t, fmt.Sprintf("%s is %q, want msb %s", p, got, MSBVersion), "run make tools")
	}
	return p
}

// MSBEnv returns os.Environ() with MSB_HOME set to a fresh temp dir of the
// test and msb's folder first on PATH, so that commands which call `msb`
// (a Taskfile) get the real one and never touch ~/.microsandbox.
func MSBEnv(t testing.TB) []string {
	t.Helper()
	msb := MSB(t)
	return withEnv(os.Environ(),
		"MSB_HOME="+MSBHome(t),
		"PATH="+filepath.Dir(msb)+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// MSBHome makes a fresh MSB_HOME under the test's temp dir. It is kept
// short: msb puts unix sockets under it (limit ~108 bytes).
func MSBHome(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "msb-")
	if err != nil {
		t.Fatalf("MSB_HOME: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// withEnv returns env with each KEY=VALUE of set replacing any KEY= entry.
func withEnv(env []string, set ...string) []string {
	out := make([]string, 0, len(env)+len(set))
	keys := map[string]bool{}
	for _, kv := range set {
		k, _, _ := strings.Cut(kv, "=")
		keys[k] = true
	}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !keys[k] {
			out = append(out, kv)
		}
	}
	return append(out, set...)
}

// WithEnv is withEnv for callers: env with each KEY=VALUE of set replacing
// any earlier entry of KEY.
func WithEnv(env []string, set ...string) []string { return withEnv(env, set...) }

// needRoot ends the test when the tool needs root and this is not root.
func needRoot(t testing.TB, tool string) {
	t.Helper()
	if os.Geteuid() != 0 {
		Unavailable(t, tool+" needs root here (rootful, private storage)", "run the tests as root (CI does)")
	}
}

// Podman returns the argv prefix of a rootful podman whose whole state (vfs
// storage, run root, libpod tmp dir) lives under a temp dir of the test:
//
//	podman --storage-driver vfs --root R --runroot RR --tmpdir T --events-backend none
//
// vfs is the storage driver that works everywhere here (no overlay mounts
// left behind). Add PodmanBuildArgs after "build".
func Podman(t testing.TB) []string {
	t.Helper()
	if skip(t) {
		return nil
	}
	p := podmanBin(t)
	dir, err := os.MkdirTemp("", "podman-")
	if err != nil {
		t.Fatalf("podman state: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return podmanArgv(p, "vfs", dir)
}

// podmanBin is the podman to run as root, or the test is unavailable.
func podmanBin(t testing.TB) string {
	t.Helper()
	p, err := lookTool("podman")
	if err != nil {
		Unavailable(t, "podman not found", "run make tools (apt-get install podman)")
	}
	needRoot(t, "podman")
	return p
}

// podmanArgv is podman with its whole state under dir, on driver.
func podmanArgv(p, driver, dir string) []string {
	return []string{p,
		"--storage-driver", driver,
		"--root", filepath.Join(dir, "root"),
		"--runroot", filepath.Join(dir, "run"),
		"--tmpdir", filepath.Join(dir, "tmp"),
		"--events-backend", "none",
	}
}

// PodmanBuildArgs are the `podman build` flags that work here: RUN steps in
// a chroot (no nested namespaces or cgroups needed).
func PodmanBuildArgs() []string { return []string{"--isolation", "chroot"} }

// BusyboxPath returns the path of a statically linked busybox (Debian's
// busybox-static), the only binary a FROM scratch test image needs.
func BusyboxPath(t testing.TB) string {
	t.Helper()
	if skip(t) {
		return ""
	}
	for _, p := range []string{"/bin/busybox", "/usr/bin/busybox"} {
		if err := checkStatic(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("busybox"); err == nil {
		if err := checkStatic(p); err != nil {
			Unavailable(t, err.Error(), "run make tools (apt-get install busybox-static)")
		}
		return p
	}
	Unavailable(t, "no static busybox found", "run make tools (apt-get install busybox-static)")
	return ""
}

// checkStatic fails unless p is an ELF executable without an interpreter.
func checkStatic(p string) error {
	f, err := elf.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked; a FROM scratch image needs busybox-static", p)
		}
	}
	return nil
}

// Busybox image layout: dev is uid/gid 1000 with home /home/dev, as in the
// generated toolchain/Dockerfile.
const (
	busyboxPasswd = "root:x:0:0:root:/root:/bin/sh\ndev:x:1000:1000:dev:/home/dev:/bin/sh\n"
	busyboxGroup  = "root:x:0:\ndev:x:1000:\n"
	// One COPY and one RUN: each build step costs a second or two here.
	busyboxDockerfile = `# A tiny stand-in for the toolchain image: static busybox, root and dev.
FROM scratch
COPY rootfs/ /
RUN ["/bin/busybox", "sh", "-c", "/bin/busybox --install -s /bin && mkdir -p /workspace /home/dev /tmp /root && chown 1000:1000 /home/dev /workspace && chmod 1777 /tmp"]
`
)

// BusyboxContext returns a fresh build context (a temp dir) with a FROM
// scratch Dockerfile that copies the static busybox to /bin/busybox, runs
// `busybox --install -s /bin`, writes /etc/passwd and /etc/group with root
// and dev (uid 1000, home /home/dev), and makes /workspace, /home/dev and
// /tmp. Everything it copies is under rootfs/.
func BusyboxContext(t testing.TB) string {
	t.Helper()
	bb := BusyboxPath(t)
	dir := t.TempDir()
	raw, err := os.ReadFile(bb)
	if err != nil {
		t.Fatalf("read %s: %v", bb, err)
	}
	files := []struct {
		path string
		data []byte
		mode os.FileMode
	}{
		{"Dockerfile", []byte(busyboxDockerfile), 0o644},
		{"rootfs/bin/busybox", raw, 0o755},
		{"rootfs/etc/passwd", []byte(busyboxPasswd), 0o644},
		{"rootfs/etc/group", []byte(busyboxGroup), 0o644},
	}
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.data, f.mode); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Run runs argv with env in dir, failing the test with its output on error;
// it returns standard output.
func Run(t testing.TB, ctx context.Context, dir string, env []string, argv ...string) []byte {
	t.Helper()
	out, stderr, err := RunErr(ctx, dir, env, nil, argv...)
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, stderr)
	}
	return out
}

// RunErr runs argv with env in dir (stdin from in when non-nil) and returns
// its standard output and standard error.
func RunErr(ctx context.Context, dir string, env []string, in []byte, argv ...string) (stdout, stderr []byte, err error) {
	if len(argv) == 0 {
		return nil, nil, errors.New("no command")
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	if in != nil {
		cmd.Stdin = bytes.NewReader(in)
	}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.Bytes(), e.Bytes(), err
}

// MachinePolicyEnv names the machine policy file a test binary's asb
// reads instead of /etc/asb/policy.yaml (none when unset, so no test
// depends on the machine it runs on). Only test binaries read it: the
// product's Factory takes its machine policy from no variable, so a user
// cannot move the administrator's floor.
const MachinePolicyEnv = "ASB_TEST_MACHINE_POLICY"

// MachinePolicy is the machine policy a test binary's asb reads.
func MachinePolicy() string { return os.Getenv(MachinePolicyEnv) }

// PrivateState points XDG_STATE_HOME, where asb keeps its users' approvals
// of outer folders (asb trust), at a fresh folder for this test binary and
// the asb it runs, so that no test reads or writes the real user's; the
// returned func removes it. Call it first thing in TestMain.
//
// Run by go test directly, the binary's temporary folder (TMPDIR) is that
// folder too: asb keeps a lock file per outer folder in the temporary
// folder by design (runner.FolderLockPath), and the tests make hundreds
// of outer folders. Under make, scripts/private-tmp.sh has given the whole
// go test a TMPDIR of its own already (PrivateTmpEnv), which is kept: a
// folder nested in it would lengthen the paths of msb's sockets.
func PrivateState() func() {
	dir, err := os.MkdirTemp("", "asb-s.")
	if err != nil {
		panic(err)
	}
	if err := os.Setenv("XDG_STATE_HOME", dir); err != nil {
		panic(err)
	}
	if os.Getenv(PrivateTmpEnv) == "" {
		if err := os.Setenv("TMPDIR", dir); err != nil {
			panic(err)
		}
	}
	return func() { removeWritable(dir) }
}

// PrivateTmpEnv is set by scripts/private-tmp.sh to the TMPDIR it made.
const PrivateTmpEnv = "ASB_PRIVATE_TMP"

// removeWritable removes dir, the read-only folders a test left in it (a
// module cache go made) included.
func removeWritable(dir string) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	_ = os.RemoveAll(dir)
}

// Slow skips t under go test -short (make test-fast): a test that runs
// many whole asb processes, or the stand-ins' scripts, which
// make test-stand-ins and make test run.
func Slow(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: whole processes, run by make test-stand-ins and make test")
	}
}
