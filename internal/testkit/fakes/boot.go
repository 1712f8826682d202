package fakes

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/agents-sandbox/asb/schema"
)

// BootEnv chooses how the stand-in's VMs boot, for the host shapes asb
// meets:
//
//	"" or "ok"  at once (a host that can boot)
//	"fail"      fails at once, the VM recorded Stopped (no /dev/kvm)
//	"spin"      like /dev/kvm without CPU virtualization: the VM stays
//	            Starting while an `msb machine` process of its own session
//	            spins for BootSecondsEnv seconds (default 600), then the
//	            boot fails. Interrupting create leaves that process running,
//	            and stop and remove wait for it, as msb 0.7.2 does.
//	"slow"      boots after BootSecondsEnv seconds (default 1)
const BootEnv = "ASB_FAKE_BOOT"

// BootSecondsEnv is how long a "spin" or "slow" boot takes.
const BootSecondsEnv = "ASB_FAKE_BOOT_SECONDS"

// MachineDelayEnv is how many seconds a VM's own process waits before it
// takes the VM's lifecycle lock: what a loaded host does to a process's
// start, made certain.
const MachineDelayEnv = "ASB_FAKE_MACHINE_DELAY"

// NoBootEnv, set to 1, is BootEnv=fail.
const NoBootEnv = "ASB_FAKE_NO_BOOT"

// bootFailure is msb 0.7.2's answer to a boot that fails, from create,
// start, and exec into a stopped VM alike (seen here: `msb exec t1 -- true`
// on the Stopped record a failed create left, exit 1; the real one says
// "(signal: 6 (SIGABRT))" without /dev/kvm, "(exit status: 1)" on /dev/kvm
// without CPU virtualization).
const bootFailure = "error: failed to start %q\n  → other: sandbox process exited (exit status: 1) before agent relay became available\n  → run `msb logs --source system %[1]s` for full diagnostics"

// dotDotFailure is msb 0.7.2's answer to a start of a VM with a bind whose
// path holds .. (seen in the nested guest: ../x, ../../../x, in either
// form, from a config anywhere): the VM's agent cannot mount the share.
const dotDotFailure = "error: failed to start %q\n  → mount: mount %s_0badd07: Invalid argument (os error 22)\n  → run `msb logs --source system %[1]s` for full diagnostics"

// dotDotBind is the last part of the first bind of sb whose path, as
// written, holds .., or "".
func dotDotBind(sb schema.Sandbox) string {
	for _, m := range sb.Mounts {
		if m.Kind == "bind" && schema.HoldsDotDot(m.Bind) {
			return filepath.Base(filepath.Clean(m.Bind))
		}
	}
	return ""
}

func bootMode() (mode string, seconds float64) {
	mode = os.Getenv(BootEnv)
	if os.Getenv(NoBootEnv) == "1" {
		mode = "fail"
	}
	seconds = 600
	if mode == "slow" {
		seconds = 1
	}
	if s, err := strconv.ParseFloat(os.Getenv(BootSecondsEnv), 64); err == nil {
		seconds = s
	}
	return mode, seconds
}

func (e *env) create(args []string) error {
	fl, pos, _ := flags(args, "--name", "-n", "--conf", "--secret-conf", "--pull", "--mount-named", "--mount-owned", "--cpus", "-c", "--memory", "-m", "--label", "--port", "-p")
	name := last(fl["--name"])
	if name == "" {
		return exitError{2, "error: --name is required by these tests"}
	}
	if len(fl["--conf"]) == 0 {
		return exitError{2, "error: --conf is required by these tests"}
	}
	var raw []byte
	image := ""
	confLabels := map[string]string{}
	cfg := &VMConfig{}
	dotDot := ""
	for _, conf := range fl["--conf"] { // later files overlay earlier ones
		sb, b, err := readConf(conf)
		if err != nil {
			return err
		}
		raw, image = append(raw, b...), cmp.Or(sb.Image, image)
		dotDot = cmp.Or(dotDot, dotDotBind(sb))
		maps.Copy(confLabels, sb.Labels)
		if c := resolvedConfig(conf, b); c != nil {
			cfg = c
		}
	}
	if len(pos) > 0 {
		image = pos[0]
	}
	var img msbImage
	if err := e.get("msb-images", normRef(image), &img); err != nil {
		return fail("error: image error: image not cached: %s", normRef(image))
	}
	digests := map[string]string{}
	for _, sc := range fl["--secret-conf"] {
		d, err := secretDigests(sc)
		if err != nil {
			return err
		}
		maps.Copy(digests, d)
	}
	if len(digests) == 0 {
		digests = nil
	}
	for _, m := range fl["--mount-named"] {
		vol, _, _ := strings.Cut(m, ":")
		if !e.exists("msb-volumes", vol) {
			return fail("error: volume not found: %s", vol)
		}
	}
	if e.exists("msb-vms", name) && fl["--replace"] == nil {
		return fail("error: sandbox already exists: sandbox '%s' already exists; remove it, start the stopped sandbox, or recreate with .replace()", name)
	}
	labels, err := parseLabels(confLabels, fl["--label"])
	if err != nil {
		return err
	}
	e.waitMachine(name) // --replace of a VM whose boot still spins
	sum := sha256.Sum256(raw)
	vm := VMRecord{Name: name, Image: normRef(image), ImageID: img.ID, Conf: hex.EncodeToString(sum[:8]),
		Mounts: append(fl["--mount-named"], fl["--mount-owned"]...), SecretSHA256: digests,
		Labels: labels, Created: now(), Config: cfg, DotDotMount: dotDot}
	ports, err := forwards(append(fl["--port"], fl["-p"]...))
	if err != nil {
		return err
	}
	vm.Config.Network.Ports = ports
	if err := e.vmDisk(name, true); err != nil {
		return err
	}
	return e.boot(vm)
}

// secretDigests reads --secret-conf as msb does: every ${VAR} must be set.
func secretDigests(path string) (map[string]string, error) {
	if path == "" {
		return nil, nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fail("error: cannot read secret config %s", path)
	}
	if err := judgeKeys(schema.SecretsFile, path, "secret config", raw); err != nil {
		return nil, err
	}
	if raw, err = schema.StripVersioned(schema.SecretsFile, raw); err != nil {
		return nil, fail("error: invalid secret config %s: %v", path, err)
	}
	var secrets schema.Secrets
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&secrets); err != nil && !errors.Is(err, io.EOF) {
		return nil, fail("error: invalid secret configuration %s: %v", path, err)
	}
	digests := map[string]string{}
	for n, s := range secrets {
		v, ok := schema.EnvRef(s.Value)
		if !ok {
			continue
		}
		if os.Getenv(v) == "" {
			return nil, fail("error: invalid config: secret %s: host environment variable %s is not set", n, v)
		}
		digests[n] = Digest(os.Getenv(v))
	}
	return digests, nil
}

func (e *env) start(args []string) error {
	_, pos, _ := flags(args, "--label")
	for _, n := range pos {
		var vm VMRecord
		if err := e.get("msb-vms", n, &vm); err != nil {
			return fail("error: sandbox not found: %s", n)
		}
		if vm.Status == "Running" {
			continue
		}
		if err := e.boot(vm); err != nil {
			return err
		}
	}
	return nil
}

// boot records vm and boots it the BootEnv way. A VM that boots has a
// process of its own for as long as it runs, which holds its lifecycle lock
// as msb's does (host.MSBLifecycleLock): `msb machine` for a boot that
// takes time, `msb hold` for one at once (a name of its own, so that what
// looks for spinning machines does not find it).
func (e *env) boot(vm VMRecord) error {
	mode, seconds := bootMode()
	verb, outcome := "machine", "fail"
	if vm.DotDotMount != "" {
		vm.Status = "Stopped"
		if err := e.put("msb-vms", vm.Name, vm); err != nil {
			return err
		}
		return fail(dotDotFailure, vm.Name, vm.DotDotMount)
	}
	switch mode {
	case "fail":
		vm.Status = "Stopped"
		if err := e.put("msb-vms", vm.Name, vm); err != nil {
			return err
		}
		return fail(bootFailure, vm.Name)
	case "spin":
	case "slow":
		outcome = "ok"
	default:
		verb, outcome, seconds = "hold", "ok", 0
	}
	m, err := e.startMachine(vm.Name, verb, seconds, outcome)
	if err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() { _ = m.Wait(); close(exited) }() // reap it should it end while create waits
	vm.Status = "Starting"
	if err := e.put("msb-vms", vm.Name, vm); err != nil {
		return err
	}
	// The machine runs on when the boot succeeds: do not reap it here.
	for {
		var cur VMRecord
		if err := e.get("msb-vms", vm.Name, &cur); err != nil {
			return fail("error: sandbox %s vanished while booting", vm.Name)
		}
		switch cur.Status {
		case "Running":
			return nil
		case "Stopped":
			return fail(bootFailure, vm.Name)
		}
		select {
		case <-exited: // the machine ended without a verdict: the boot failed
			if e.get("msb-vms", vm.Name, &cur) == nil && cur.Status == "Running" {
				return nil
			}
			return fail(bootFailure, vm.Name)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// startMachine starts the VM's own process and returns once it holds the
// VM's lifecycle lock (or has ended, or 10 s passed): the machine first,
// then the record, so whoever sees the VM Starting finds its machine
// process and the lock held, as a running VM's is.
func (e *env) startMachine(vm, verb string, seconds float64, outcome string) (*exec.Cmd, error) {
	self, err := exec.LookPath("msb")
	if err != nil {
		return nil, err
	}
	held, tell, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer held.Close()
	m := exec.Command(self, verb, "--name", vm, "--seconds", fmt.Sprint(seconds), "--outcome", outcome)
	m.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // as msb: out of the terminal's reach
	// and, as msb's, with none of the caller's streams: stdin, stdout and
	// stderr are /dev/null (nil), so no pipe stays open behind a create.
	// Its fd 3 is closed once it holds the lock.
	m.ExtraFiles = []*os.File{tell}
	m.Env = append(os.Environ(), heldFDEnv+"=3")
	err = m.Start()
	tell.Close()
	if err != nil {
		return nil, err
	}
	if err := e.putRaw("msb-machines", vm, []byte(strconv.Itoa(m.Process.Pid))); err != nil {
		return nil, err
	}
	_ = held.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, _ = io.Copy(io.Discard, held) // until the machine closes fd 3
	return m, nil
}

// runUntilGone waits for SIGTERM (true: stopped) or for the VM to be gone
// from under its process (false, and nothing is written): its record
// removed or no longer Running, or the whole state folder (a test's
// temporary folder) removed.
func (e *env) runUntilGone(name string, term <-chan os.Signal) (gone bool) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-term:
			return false
		case <-tick.C:
			var vm VMRecord
			if e.get("msb-vms", name, &vm) != nil || vm.Status != "Running" {
				return true
			}
		}
	}
}

// waitMachine ends the machine of a running VM and waits for a booting one
// to end by itself, as msb's stop and remove do.
func (e *env) waitMachine(name string) {
	raw, err := os.ReadFile(e.path("msb-machines", name))
	if err != nil {
		return
	}
	pid, err := strconv.Atoi(string(raw))
	if err != nil {
		return
	}
	var vm VMRecord
	if e.get("msb-vms", name, &vm) == nil && vm.Status == "Running" {
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	for syscall.Kill(pid, 0) == nil {
		if _, err := os.Stat(e.path("msb-machines", name)); err != nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (e *env) setStatus(name, status string) error {
	var vm VMRecord
	if err := e.get("msb-vms", name, &vm); err != nil {
		return err
	}
	vm.Status = status
	return e.put("msb-vms", name, vm)
}

// resolvedConfig is what msb inspect would show of conf's mounts, ports
// and resources (nil for an overlay with no mounts): relative binds
// resolve against the config file's folder, as msb 0.7.2 resolves them
// (e2e/session_real_test.go saw it: .asb/sessions/one/./opencode).
func resolvedConfig(conf string, raw []byte) *VMConfig {
	sb, _, _ := schema.LoadSandbox(conf, raw)
	if sb == nil || len(sb.Mounts) == 0 {
		return nil
	}
	base, _ := filepath.Abs(filepath.Dir(conf))
	c := &VMConfig{Ports: sb.Ports}
	c.Resources.CPUs = sb.CPUs
	if n, err := schema.ParseSize(sb.Memory); err == nil {
		c.Resources.MemoryMiB = n
	}
	for _, m := range sb.Mounts {
		if m.Kind != "bind" {
			continue
		}
		h := m.Bind
		if !filepath.IsAbs(h) {
			h = filepath.Join(base, h)
		}
		c.Mounts = append(c.Mounts, VMMount{Type: "Bind", Host: h, Guest: m.Target})
	}
	return c
}
