package testenv

import (
	"bufio"
	"cmp"
	_ "embed"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A real boot needs a host that can boot microVMs. Where this one cannot
// (no CPU virtualization), the real-boot tests make one: a guest emulated
// by QEMU (TCG, -cpu max, so its CPU has AMD SVM), whose kernel gets a
// working /dev/kvm, and the real msb boots microVMs inside it. `make tools`
// builds its parts into $ASB_TOOLS_DIR/nested (scripts/install-tools.sh):
// QEMU from Debian trixie, Debian's kernel as an uncompressed vmlinux, and
// an initramfs whose /init mounts a data disk on /data and runs
// /data/run.sh. A Guest is that data disk's content: msb, the static asb,
// images, the outer folder and the scenario script. Results come back over
// the serial console, one line each (see GuestLib).
//
// Where the host itself can boot, the same scenario runs directly on it.

// Host shapes of a real-boot run.
const (
	ShapeNested = "nested"   // the scenario ran in the emulated guest
	ShapeDirect = "can-boot" // the scenario ran on this host, which boots
)

// NestedDir is where make tools puts the nested host's parts.
func NestedDir() string {
	dir := os.Getenv(EnvToolsDir)
	if dir == "" {
		dir = ".tools"
	}
	return filepath.Join(dir, "nested")
}

// Guest is a scenario being assembled: Data becomes /data in the guest.
type Guest struct {
	Name  string // the session's name, in its console log's file name
	Shape string
	Data  string
	qemu  string // the nested parts (ShapeNested)
	// Memory is L2's memory (QEMU's -m); "" is 4G. The boot session's is
	// 6G: a session's VM asks 4 GiB beside the folder's, and asb checks
	// that the machine holds it.
	Memory string
	// retries: how many times the emulation failed the session and it
	// ran again (SessionRetries at most).
	retries int
	qemuLog string // QEMU's own log of this session's resets (qemuCmd)
}

// NewGuest prepares the guest session name for the test: the nested host
// where this host cannot boot, this host where it can. The nested host's
// parts missing is a skip, or a failure in CI (Unavailable).
func NewGuest(t testing.TB, name string) *Guest {
	t.Helper()
	if skip(t) {
		return nil
	}
	data, err := os.MkdirTemp("", "asb-guest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(data) })
	if CanBoot() {
		return &Guest{Name: name, Shape: ShapeDirect, Data: data}
	}
	dir, _ := filepath.Abs(NestedDir())
	for _, f := range []string{"key", "vmlinux", "initramfs", "qemu/usr/bin/qemu-system-x86_64"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			Unavailable(t, "this host cannot boot a microVM and the nested host is not built ("+err.Error()+")",
				"run make tools (as root: QEMU from Debian trixie and a Debian kernel)")
			return nil
		}
	}
	if _, err := exec.LookPath("mkfs.ext4"); err != nil {
		Unavailable(t, "mkfs.ext4 not found (the nested guest's data disk)", "apt-get install e2fsprogs")
		return nil
	}
	return &Guest{Name: name, Shape: ShapeNested, Data: data, qemu: dir}
}

// WriteFile writes data at rel under the guest's /data.
func (g *Guest) WriteFile(t testing.TB, rel string, data []byte, mode os.FileMode) {
	t.Helper()
	p := filepath.Join(g.Data, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

// CopyDir copies the tree src to rel under /data, modes kept.
func (g *Guest) CopyDir(t testing.TB, rel, src string) {
	t.Helper()
	dst := filepath.Join(g.Data, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	// cp -a keeps modes, symlinks and owners (msb needs its lib/ beside bin/).
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp -a %s %s: %v\n%s", src, dst, err, out)
	}
}

// AddMSB puts the real msb with its libkrunfw under /data/msb (bin/msb,
// lib/libkrunfw.so.*).
func (g *Guest) AddMSB(t testing.TB) {
	t.Helper()
	msb := MSB(t)
	real, err := filepath.EvalSymlinks(msb)
	if err != nil {
		t.Fatal(err)
	}
	g.CopyDir(t, "msb", filepath.Dir(filepath.Dir(real)))
}

var ptyrunBuild programs

// AddStaticAsb copies asb and asb-task, as BuildAsb makes them (static,
// as users install them: InstallEnv; the guest has no Go toolchain and
// only the C library msb needs), to /data/bin, with two programs built
// the same way once per test binary: ptyrun, and floor (make bench's
// floor: a cobra executable with one subcommand, the start of any Go
// program in front of msb, which the boot session's figures hold asb's
// own start against).
func (g *Guest) AddStaticAsb(t testing.TB) {
	t.Helper()
	asbDir := filepath.Dir(BuildAsb(t))
	ptyDir, err := ptyrunBuild.build("asb-ptyrun-", func(dir string) []string {
		return []string{"-o", into(dir), "github.com/agents-sandbox/asb/internal/testkit/testenv/ptyrun",
			"github.com/agents-sandbox/asb/internal/benchmark/floor"}
	})
	if err != nil {
		t.Fatalf("build ptyrun and floor: %v", err)
	}
	for _, b := range []string{filepath.Join(asbDir, "asb"), filepath.Join(asbDir, "asb-task"), filepath.Join(ptyDir, "ptyrun"), filepath.Join(ptyDir, "floor")} {
		raw, err := os.ReadFile(b)
		if err != nil {
			t.Fatal(err)
		}
		g.WriteFile(t, "bin/"+filepath.Base(b), raw, 0o755)
	}
}

// Step is what one `step NAME CMD…` of a scenario returned.
type Step struct {
	Code int
	Out  string // standard output
	Err  string // standard error
	Secs float64
	// Diag is what the scenario's on_fail said when the step failed: the
	// VM's and the agent's own logs, msb's, the guest kernel's.
	Diag string
}

// Session is what a guest run reported.
type Session struct {
	Shape string
	Log   string // the serial console (or the direct run's output)
	Steps map[string]Step
	Notes map[string]string
	Order []string // the steps, in the order they ran
	Ended bool     // the scenario ran to its end
	// Console is the file that keeps this session's console (one a
	// session and run: a later session never overwrites it).
	Console string
	// Unfinished is what the step that had not ended when the session
	// did last said: its last heartbeat (what it ran then) and the live
	// lines after it (guestlib.sh's step_watch and live); "" when every
	// step ended.
	Unfinished string
}

// Step returns the step name; a step that did not run fails the test.
func (s *Session) Step(t testing.TB, name string) Step {
	t.Helper()
	st, ok := s.Steps[name]
	if !ok {
		in := ""
		if s.Unfinished != "" {
			in = "; it ended in " + s.Unfinished
		}
		t.Fatalf("the scenario (%s) did not run step %q%s\nits log ends:\n%s", s.Shape, name, in, lastLines(s.Log, 60))
	}
	return st
}

// unb64 decodes a step's output, printed as "x" and its base64 (so that
// nothing is never an empty field).
func unb64(s string) string {
	b, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, "x"))
	return string(b)
}

// consoleOnly is log without the step lines (the test prints their summary).
func consoleOnly(log string) string {
	var b strings.Builder
	for _, l := range strings.Split(log, "\n") {
		if !strings.Contains(l, "@@asb step ") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// parseSession reads the result lines of guestlib.sh out of a log.
func parseSession(shape, log string) *Session {
	s := &Session{Shape: shape, Log: log, Steps: map[string]Step{}, Notes: map[string]string{}}
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	var beat string    // the running step's last heartbeat
	var lives []string // and its live lines, the last maxLives
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		_, rest, ok := strings.Cut(line, "@@asb ")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		switch {
		case len(f) == 6 && f[0] == "step":
			code, _ := strconv.Atoi(f[2])
			secs, _ := strconv.ParseFloat(f[3], 64)
			s.Steps[f[1]] = Step{Code: code, Out: unb64(f[4]), Err: unb64(f[5]), Secs: secs}
			s.Order = append(s.Order, f[1])
			beat, lives = "", nil
		case len(f) == 3 && f[0] == "diag":
			st := s.Steps[f[1]]
			st.Diag = unb64(f[2])
			s.Steps[f[1]] = st
		case len(f) >= 2 && f[0] == "note":
			s.Notes[f[1]] = strings.Join(f[2:], " ")
		case len(f) >= 2 && f[0] == "beat":
			if _, ended := s.Steps[f[1]]; !ended {
				beat = "step " + strings.Join(f[1:], " ")
			}
		case len(f) >= 3 && f[0] == "live":
			lives = append(lives[max(0, len(lives)-maxLives+1):], strings.Join(f[1:], " "))
		case len(f) == 1 && f[0] == "end":
			s.Ended = true
		}
	}
	if beat == "" && len(lives) > 0 {
		beat = "a step, before its first heartbeat"
	}
	if beat != "" {
		s.Unfinished = strings.Join(append([]string{beat}, lives...), "\n  live: ")
	}
	return s
}

// maxLives is how many of a running step's live lines Session.Unfinished
// keeps: its latest.
const maxLives = 12

// GuestLib is sourced by every scenario, before its own script: step,
// note, now (guestlib.sh says what each does, and how every step ends).
//
//go:embed guestlib.sh
var GuestLib string

// qemuCmd makes /data into an ext4 disk image and returns the QEMU command
// that boots the nested guest with it: TCG with several threads (a single
// one hung the microVM), -cpu max (SVM), the kernel by its PVH entry, the
// serial console on standard input and output (input: the magic SysRq of
// askKernel, by QEMU's Ctrl-A b), no network. The guest's kernel keeps the
// TSC as its clock (tsc=reliable). Otherwise its check at boot found the
// two vCPUs' TSCs apart ("Marking TSC unstable due to TSCs
// unsynchronized": each vCPU is a thread of the host, which reads it when
// it runs) and it took the emulated HPET, so that every clock read of the
// guest, and of its microVMs ("kvm: SMP vm created on host with unstable
// TSC"), was a device's read and a system call. TCG's TSC is one clock for
// every vCPU, the host's. The boot session took 4m55s-5m2s and 393-415
// CPU-seconds so, against 5m47s-5m58s and 454-465 (docs/boot.md).
func (g *Guest) qemuCmd(t testing.TB) *exec.Cmd {
	t.Helper()
	img := g.Data + ".img"
	t.Cleanup(func() { _ = os.Remove(img) })
	// Sparse: the VMs' disks and images live on it. cache=unsafe below.
	for _, argv := range [][]string{{"truncate", "-s", "24G", img}, {"mkfs.ext4", "-q", "-F", "-d", g.Data, img}} {
		if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
		}
	}
	q := filepath.Join(g.qemu, "qemu")
	libs := filepath.Join(q, "lib/x86_64-linux-gnu") + ":" + filepath.Join(q, "usr/lib/x86_64-linux-gnu")
	args := []string{"--library-path", libs,
		filepath.Join(q, "usr/bin/qemu-system-x86_64"),
		"-L", filepath.Join(q, "usr/share/qemu"), "-L", filepath.Join(q, "usr/share/seabios"),
		"-accel", "tcg,thread=multi,tb-size=512", "-smp", "2", "-m", cmp.Or(g.Memory, "4G"), "-cpu", "max",
		"-kernel", filepath.Join(g.qemu, "vmlinux"), "-initrd", filepath.Join(g.qemu, "initramfs"),
		"-append", "console=ttyS0 panic=-1 quiet loglevel=1 sysrq_always_enabled tsc=reliable",
		"-nographic", "-monitor", "none", "-serial", "mon:stdio", "-no-reboot", "-nic", "none",
		"-drive", "file=" + img + ",format=raw,if=virtio,cache=unsafe"}
	// QEMU's own log of each reset of the machine, with its CPU's state
	// then: where a guest that reset by itself in the middle of the
	// scenario was (three times, each while an agent ran in the microVM).
	g.qemuLog = ""
	if f, err := artifact("qemu-" + g.Name + ".log"); err == nil {
		g.qemuLog = f.Name()
		_ = f.Close()
		args = append(args, "-d", "cpu_reset", "-D", g.qemuLog)
	}
	return exec.Command(filepath.Join(q, "lib64/ld-linux-x86-64.so.2"), args...)
}

// qemuLogEnd is the end of QEMU's own log of the session (qemuCmd), for a
// message; "" where there is none.
func (g *Guest) qemuLogEnd() string {
	if g.qemuLog == "" {
		return ""
	}
	raw, err := os.ReadFile(g.qemuLog)
	if err != nil || len(raw) == 0 {
		return ""
	}
	return fmt.Sprintf("\nQEMU's own log of the machine's resets (%s), its end:\n%s", g.qemuLog, lastLines(strings.TrimRight(string(raw), "\n"), 40))
}

// Why is what a failed step's message quotes: the end of what it printed,
// then each section of what the scenario's on_fail gathered (the agent's
// own log, msb's logs for each sandbox, the guest kernel's), each cut to
// its last lines.
func (st Step) Why() string {
	var b strings.Builder
	fmt.Fprintf(&b, "exit %d after %.1f s; it printed (the end):\n%s", st.Code, st.Secs, lastLines(strings.TrimRight(st.Out+st.Err, "\n"), 40))
	if st.Diag == "" {
		return b.String()
	}
	b.WriteString("\nwhat the guest said when it failed:")
	for _, sec := range strings.Split("\n"+strings.TrimRight(st.Diag, "\n"), "\n== ") {
		if sec = strings.TrimPrefix(sec, "\n"); sec == "" {
			continue
		}
		head, body, _ := strings.Cut(sec, "\n")
		fmt.Fprintf(&b, "\n== %s\n%s", strings.TrimPrefix(head, "== "), lastLines(body, 25))
	}
	return b.String()
}
