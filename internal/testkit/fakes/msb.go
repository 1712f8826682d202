package fakes

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
)

type msbImage struct {
	Reference string `json:"reference"`
	ID        string `json:"id"`
	Size      int64  `json:"size_bytes,omitempty"`
	Created   string `json:"created_at,omitempty"`
}

// VMRecord is what the stand-in keeps of a VM.
type VMRecord struct {
	Name    string   `json:"name"`
	Image   string   `json:"image"`
	ImageID string   `json:"image_id"`
	Status  string   `json:"status"`
	Conf    string   `json:"conf_sha256"`
	Mounts  []string `json:"mounts"`
	// Labels are msb create's --label KEY[=VALUE]s; Created is when.
	Labels  map[string]string `json:"labels,omitempty"`
	Created string            `json:"created_at,omitempty"`
	// SecretSHA256 holds, per secret, a digest of the value its variable had
	// at create time (never the value), so tests can tell which source won.
	SecretSHA256 map[string]string `json:"secret_sha256,omitempty"`
	// DotDotMount is a bind whose path, as written, holds ..: msb 0.7.2
	// records the VM, and its start fails (boot: dotDotFailure).
	DotDotMount string `json:"dotdot_mount,omitempty"`
	// Config is what msb inspect shows of the resolved config, in its
	// shape: the bind mounts (host path resolved against the config
	// file's folder, as msb does), the ports, the resources, the forwards
	// of msb create's --port as msb 0.7.2 records them, and the labels
	// (msb inspect shows them here; set when printed).
	Config *VMConfig `json:"config,omitempty"`
}

// VMConfig is the part of msb inspect's config the stand-in keeps.
type VMConfig struct {
	Labels    map[string]string `json:"labels"`
	Mounts    []VMMount         `json:"mounts"`
	Ports     []string          `json:"ports,omitempty"`
	Resources struct {
		CPUs      int   `json:"cpus"`
		MemoryMiB int64 `json:"memory_mib"`
	} `json:"resources"`
	Network struct {
		Ports []Forward `json:"ports"`
	} `json:"network"`
}

// VMMount is one mount as msb inspect shows it.
type VMMount struct {
	Type  string `json:"type"`
	Host  string `json:"host"`
	Guest string `json:"guest"`
}

// Forward is one port forward as msb inspect shows it.
type Forward struct {
	GuestPort int    `json:"guest_port"`
	HostBind  string `json:"host_bind"`
	HostPort  int    `json:"host_port"`
	Protocol  string `json:"protocol"`
}

// forwards reads --port values as msb does: HOST:GUEST (bound to
// 127.0.0.1) or BIND:HOST:GUEST, with /tcp or /udp.
func forwards(specs []string) ([]Forward, error) {
	var out []Forward
	for _, s := range specs {
		spec, proto, _ := strings.Cut(s, "/")
		parts := strings.Split(spec, ":")
		if len(parts) == 2 {
			parts = append([]string{"127.0.0.1"}, parts...)
		}
		if len(parts) != 3 {
			return nil, exitError{2, fmt.Sprintf("error: invalid value '%s' for '--port <PORT>'", s)}
		}
		h, err1 := strconv.Atoi(parts[1])
		g, err2 := strconv.Atoi(parts[2])
		if err1 != nil || err2 != nil {
			return nil, exitError{2, fmt.Sprintf("error: invalid value '%s' for '--port <PORT>'", s)}
		}
		out = append(out, Forward{GuestPort: g, HostBind: parts[0], HostPort: h, Protocol: cmp.Or(proto, "tcp")})
	}
	return out, nil
}

// VM reads the stand-in's record of VM name.
func VM(state, name string) (VMRecord, error) {
	var vm VMRecord
	e := &env{state: state}
	err := e.get("msb-vms", name, &vm)
	return vm, err
}

// Digest is how SecretSHA256 digests a value.
func Digest(v string) string {
	sum := sha256.Sum256([]byte(v))
	return hex.EncodeToString(sum[:8])
}

func (e *env) msb(args []string) error {
	if len(args) == 0 {
		return exitError{2, "error: a command is required"}
	}
	cmd, args := args[0], args[1:]
	switch cmd {
	case "--version", "-V":
		return e.msbVersion()
	case "image":
		return e.msbImage(args)
	case "list", "ls":
		return e.msbList(args)
	case "df", "prune":
		return e.msbStorage(cmd, args)
	case "load":
		return e.msbLoad(args)
	case "volume", "vol":
		return e.msbVolume(args)
	case "inspect":
		return e.msbInspect(args)
	case "status", "ps":
		return e.msbStatus(args)
	case "create":
		return e.create(args)
	case "start":
		return e.start(args)
	case "machine", "hold":
		return e.machine(args)
	case "stop":
		return e.msbStop(args)
	case "remove", "rm":
		return e.msbRemove(args)
	case "exec":
		return e.msbExec(args)
	case "serve-standin":
		return e.serveStandin(args)
	case "logs":
		return e.msbLogs(args)
	}
	return exitError{2, fmt.Sprintf("error: unrecognized subcommand '%s'", cmd)}
}

func (e *env) msbImage(args []string) error {
	if len(args) >= 1 && (args[0] == "ls" || args[0] == "list") {
		return e.imageList(args[1:])
	}
	if len(args) >= 1 && (args[0] == "rm" || args[0] == "remove") {
		return e.imageRemove(args[1:])
	}
	if len(args) < 2 || args[0] != "inspect" {
		return exitError{2, "error: unrecognized image subcommand"}
	}
	var img msbImage
	if err := e.get("msb-images", normRef(args[1]), &img); err != nil {
		return fail("error: image not found: %s", args[1])
	}
	return json.NewEncoder(e.stdout).Encode(img)
}

func (e *env) msbLoad(args []string) error {
	fl, _, _ := flags(args, "--tag", "-t", "--input", "-i")
	data, err := io.ReadAll(e.stdin)
	if err != nil {
		return err
	}
	fields := strings.Fields(string(data))
	if len(fields) < 3 || len(fields) > 4 || fields[0] != "FAKE-IMAGE" {
		return fail("error: manifest parse error: archive missing manifest.json or oci-layout")
	}
	size := int64(fakeImageSize) // FAKE-IMAGE REF ID [SIZE]
	if len(fields) == 4 {
		if _, err := fmt.Sscan(fields[3], &size); err != nil {
			return fail("error: manifest parse error: bad size %s", fields[3])
		}
	}
	refs := []string{normRef(fields[1])}
	for _, t := range append(fl["--tag"], fl["-t"]...) {
		refs = append(refs, normRef(t))
	}
	for _, r := range refs {
		if err := e.put("msb-images", r, msbImage{Reference: r, ID: fields[2], Size: size, Created: now()}); err != nil {
			return err
		}
	}
	return nil
}

func (e *env) msbVolume(args []string) error {
	if len(args) >= 1 && args[0] == "ls" {
		return e.volumeList()
	}
	if len(args) < 2 {
		return exitError{2, "error: a volume command and name are required"}
	}
	_, pos, _ := flags(args[1:], "--kind", "--size", "--name", "-n")
	if len(pos) != 1 {
		return exitError{2, "error: a volume name is required"}
	}
	name := pos[0]
	switch args[0] {
	case "inspect":
		if !e.exists("msb-volumes", name) {
			return fail("error: volume not found: %s", name)
		}
		_, err := fmt.Fprintf(e.stdout, "{\"name\": %q}\n", name)
		return err
	case "create":
		if e.exists("msb-volumes", name) {
			return fail("error: volume already exists: %s", name)
		}
		if err := e.volumeDir(name, true); err != nil {
			return err
		}
		return e.put("msb-volumes", name, map[string]string{"name": name, "kind": "dir", "created_at": now()})
	case "rm", "remove":
		if !e.exists("msb-volumes", name) {
			return fail("error: volume not found: %s", name)
		}
		if err := e.volumeDir(name, false); err != nil {
			return err
		}
		return os.Remove(e.path("msb-volumes", name))
	}
	return exitError{2, "error: unrecognized volume subcommand " + args[0]}
}

func (e *env) msbInspect(args []string) error {
	_, pos, _ := flags(args, "--format")
	if len(pos) != 1 {
		return exitError{2, "error: a sandbox name is required"}
	}
	var vm VMRecord
	if err := e.get("msb-vms", pos[0], &vm); err != nil {
		return fail("error: sandbox not found: %s", pos[0])
	}
	// The record's own fields, and msb's config.labels beside the forwards.
	if vm.Config == nil {
		vm.Config = &VMConfig{}
	}
	vm.Config.Labels = vm.Labels
	return json.NewEncoder(e.stdout).Encode(vm)
}

func (e *env) msbStatus(args []string) error {
	_, pos, _ := flags(args, "--format", "--label")
	if len(pos) != 1 {
		return nil // running sandboxes: none of interest
	}
	var vm VMRecord
	if err := e.get("msb-vms", pos[0], &vm); err != nil {
		return fail("error: sandbox not found: %s", pos[0])
	}
	_, err := fmt.Fprintf(e.stdout, "{\n  \"name\": %q,\n  \"status\": %q\n}\n", vm.Name, vm.Status)
	return err
}

func (e *env) msbStop(args []string) error {
	_, pos, _ := flags(args, "--label", "--timeout", "-t")
	for _, n := range pos {
		var vm VMRecord
		if err := e.get("msb-vms", n, &vm); err != nil {
			return fail("error: sandbox not found: %s", n)
		}
		if vm.Status != "Running" && vm.Status != "Starting" {
			return fail("error: sandbox %q is not running", n)
		}
		// Like msb: a stop waits for a boot in progress to end.
		e.waitMachine(n)
		if err := e.setStatus(n, "Stopped"); err != nil {
			return err
		}
	}
	return nil
}

func (e *env) msbRemove(args []string) error {
	fl, pos, _ := flags(args, "--label")
	for _, n := range pos {
		var vm VMRecord
		if err := e.get("msb-vms", n, &vm); err != nil {
			return fail("error: sandbox not found: %s", n)
		}
		if vm.Status == "Running" && fl["--force"] == nil && fl["-f"] == nil {
			return fail("error: sandbox %q is running; stop it or use --force", n)
		}
		// Like msb: removing a VM whose boot spins waits for the spin to end.
		e.waitMachine(n)
		if err := os.Remove(e.path("msb-vms", n)); err != nil {
			return err
		}
		if err := e.vmDisk(n, false); err != nil {
			return err
		}
	}
	return nil
}

func (e *env) msbExec(args []string) error {
	fl, pos, rest := flags(args, "-u", "--user", "-w", "--workdir", "-e", "--env", "--timeout", "--rlimit")
	if len(pos) != 1 {
		return exitError{2, "error: exec needs a sandbox name"}
	}
	var vm VMRecord
	if err := e.get("msb-vms", pos[0], &vm); err != nil {
		return fail("error: sandbox not found: %s", pos[0])
	}
	switch vm.Status {
	case "Running":
	case "Stopped":
		// msb 0.7.2 starts a stopped VM itself (with this process's
		// environment), and stops it again when the command ends.
		if err := e.boot(vm); err != nil {
			return err
		}
		defer func() {
			e.waitMachine(vm.Name)
			_ = e.setStatus(vm.Name, "Stopped")
		}()
	default:
		return fail("error: sandbox '%s' is in state %s and cannot be started", pos[0], vm.Status)
	}
	if fl["--stream"] != nil {
		// What the command read on its stdin, as a digest (never the
		// bytes): a test can tell a value reached the VM that way.
		in, err := io.ReadAll(e.stdin)
		if err != nil {
			return err
		}
		if err := e.putRaw("msb-exec-stdin", pos[0], []byte(Digest(string(in)))); err != nil {
			return err
		}
		if strings.Contains(strings.Join(rest, " "), "serve") {
			if err := e.startServer(vm, in); err != nil {
				return err
			}
		}
	}
	if len(rest) > 0 && rest[0] == WaitCommand {
		return e.waitForSignal(pos[0])
	}
	_, err := fmt.Fprintf(e.stdout, "fake-exec[%s]: %s\n", pos[0], strings.Join(rest, " "))
	return err
}

// WaitCommand, run in the stand-in's VM (msb exec VM -- standin-wait), is a
// command that runs until a signal reaches msb exec, which then exits
// 128+N as msb does for a command ended so; Waiting says it is waiting.
const WaitCommand = "standin-wait"

func (e *env) waitForSignal(vm string) error {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	if err := e.putRaw("msb-exec-waiting", vm, []byte(strconv.Itoa(os.Getpid()))); err != nil {
		return err
	}
	s := (<-sigs).(syscall.Signal)
	_ = os.Remove(e.path("msb-exec-waiting", vm))
	return exitError{128 + int(s), "fake-exec: ended by " + s.String()}
}

// Waiting reports whether a WaitCommand runs in vm.
func Waiting(state, vm string) bool {
	_, err := os.Stat((&env{state: state}).path("msb-exec-waiting", vm))
	return err == nil
}

// ExecStdin is the digest (Digest) of what the last msb exec --stream in
// vm read on its stdin.
func ExecStdin(state, vm string) (string, error) {
	raw, err := os.ReadFile((&env{state: state}).path("msb-exec-stdin", vm))
	return string(raw), err
}

// normRef applies msb's rule that a bare name:tag means docker.io/library/name:tag.
func normRef(ref string) string {
	if strings.Contains(ref, "/") {
		return ref
	}
	return "docker.io/library/" + ref
}

func last(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[len(s)-1]
}
