// Package fakes holds stateful stand-ins for msb, docker and podman, for
// fast tests of task sequencing at the process boundary. They keep their
// state in files under $ASB_FAKE_STATE and behave like the real tools where
// the Taskfile relies on it: inspecting a missing thing fails, create needs
// the image (and the secrets' variables) and refuses an existing VM without
// --replace, exec needs a running VM, load reads the image from stdin. Each
// call is appended to calls.log, one JSON argv per line. The same behaviour
// is checked against the real tools by the e2e tests.
//
// Build compiles the stand-in (cmd/fake) once and links each tool name to
// it; a test binary can also be the stand-in itself, by calling Dispatch
// first thing in TestMain.
package fakes

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agents-sandbox/asb/schema"
)

// StateEnv names the folder holding the fakes' state.
const StateEnv = "ASB_FAKE_STATE"

// NoBootEnv, set to 1, makes create and start fail the way they do on a
// host without CPU virtualization: the VM is recorded, Stopped.
const NoBootEnv = "ASB_FAKE_NO_BOOT"

// Tools are the names the fakes answer to.
var Tools = []string{"msb", "docker", "podman"}

// Dispatch runs the fake named by argv[0] and exits, or returns when argv[0]
// is not one of Tools.
func Dispatch() {
	name := filepath.Base(os.Args[0])
	if !slices.Contains(Tools, name) {
		return
	}
	os.Exit(Main(name, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// Build compiles the stand-in into dir/fake with the go command and
// returns its path. Call it once per test binary (TestMain) and Link it
// into each test's bin folder.
func Build(dir string) (string, error) {
	out := filepath.Join(dir, "fake")
	cmd := exec.Command("go", "build", "-o", out, "github.com/agents-sandbox/asb/internal/testkit/fakes/cmd/fake")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the stand-in tools: %w\n%s", err, b)
	}
	return out, nil
}

// Link puts msb, docker and podman into bin, each a link to the stand-in
// binary fake (from Build, or the running test binary).
func Link(fake, bin string) error {
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return err
	}
	for _, t := range Tools {
		if err := os.Symlink(fake, filepath.Join(bin, t)); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	return nil
}

// Call is one recorded invocation.
type Call []string

// String is the argv joined with spaces.
func (c Call) String() string { return strings.Join(c, " ") }

// Calls reads the log of invocations.
func Calls(state string) ([]Call, error) {
	f, err := os.Open(filepath.Join(state, "calls.log"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var calls []Call
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var c Call
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			return nil, err
		}
		calls = append(calls, c)
	}
	return calls, sc.Err()
}

// ResetCalls empties the log (the state stays).
func ResetCalls(state string) error {
	err := os.Remove(filepath.Join(state, "calls.log"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

type env struct {
	state  string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

// Main runs one fake invocation and returns its exit code.
func Main(tool string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	state := os.Getenv(StateEnv)
	if state == "" {
		fmt.Fprintf(stderr, "fake %s: %s is not set\n", tool, StateEnv)
		return 127
	}
	e := &env{state: state, stdin: stdin, stdout: stdout, stderr: stderr}
	if err := e.record(append([]string{tool}, args...)); err != nil {
		fmt.Fprintf(stderr, "fake %s: %v\n", tool, err)
		return 127
	}
	var err error
	if tool == "msb" {
		err = e.msb(args)
	} else {
		err = e.builder(tool, args)
	}
	if err != nil {
		var ee exitError
		if errors.As(err, &ee) {
			fmt.Fprintln(stderr, ee.msg)
			return ee.code
		}
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 1
	}
	return 0
}

type exitError struct {
	code int
	msg  string
}

func (e exitError) Error() string { return e.msg }

func fail(format string, a ...any) error { return exitError{1, fmt.Sprintf(format, a...)} }

func (e *env) record(argv []string) error {
	if err := os.MkdirAll(e.state, 0o755); err != nil {
		return err
	}
	b, err := json.Marshal(argv)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(e.state, "calls.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.Write(append(b, '\n'))
	return err
}

func (e *env) path(kind, name string) string {
	return filepath.Join(e.state, kind, hex.EncodeToString([]byte(name)))
}

func (e *env) exists(kind, name string) bool {
	_, err := os.Stat(e.path(kind, name))
	return err == nil
}

func (e *env) put(kind, name string, v any) error {
	p := e.path(kind, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(p, b, 0o644)
}

func (e *env) get(kind, name string, v any) error {
	b, err := os.ReadFile(e.path(kind, name))
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// flags splits args into flag values and positionals. valued lists the
// flags that take a value; "--" ends the flags (rest returned separately).
func flags(args []string, valued ...string) (map[string][]string, []string, []string) {
	fl := map[string][]string{}
	var pos, rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return fl, pos, args[i+1:]
		case strings.HasPrefix(a, "-"):
			name, val, hasVal := strings.Cut(a, "=")
			if slices.Contains(valued, name) && !hasVal && i+1 < len(args) {
				i++
				val = args[i]
			}
			fl[name] = append(fl[name], val)
		default:
			pos = append(pos, a)
		}
	}
	return fl, pos, rest
}

// ---- docker / podman ----

type builtImage struct {
	Tag string `json:"tag"`
	ID  string `json:"id"`
}

func (e *env) builder(tool string, args []string) error {
	// podman's global flags come before the subcommand.
	for len(args) > 1 && strings.HasPrefix(args[0], "--") {
		if strings.Contains(args[0], "=") {
			args = args[1:]
		} else {
			args = args[2:]
		}
	}
	if len(args) == 0 {
		return exitError{125, tool + ": no command"}
	}
	kind := tool + "-images"
	switch args[0] {
	case "build":
		fl, pos, _ := flags(args[1:], "--tag", "-t", "--file", "-f", "--isolation", "--build-arg")
		tags := append(fl["--tag"], fl["-t"]...)
		if len(pos) != 1 || len(tags) == 0 {
			return exitError{125, tool + " build: want --tag T CONTEXT"}
		}
		df, err := os.ReadFile(filepath.Join(pos[0], "Dockerfile"))
		if err != nil {
			return fail("%s build: no Dockerfile in %s", tool, pos[0])
		}
		sum := sha256.Sum256(df)
		img := builtImage{Tag: tags[0], ID: hex.EncodeToString(sum[:8])}
		fmt.Fprintf(e.stdout, "Successfully built %s\nSuccessfully tagged %s\n", img.ID, img.Tag)
		return e.put(kind, tags[0], img)
	case "image":
		if len(args) >= 3 && args[1] == "inspect" {
			var img builtImage
			if err := e.get(kind, args[2], &img); err != nil {
				return fail("Error: No such image: %s", args[2])
			}
			return json.NewEncoder(e.stdout).Encode([]builtImage{img})
		}
	case "save":
		_, pos, _ := flags(args[1:], "-o", "--output")
		if len(pos) != 1 {
			return exitError{125, tool + " save: want one image"}
		}
		var img builtImage
		if err := e.get(kind, pos[0], &img); err != nil {
			return fail("Error: No such image: %s", pos[0])
		}
		_, err := fmt.Fprintf(e.stdout, "FAKE-IMAGE %s %s\n", img.Tag, img.ID)
		return err
	case "version", "info":
		_, err := fmt.Fprintf(e.stdout, "fake %s\n", tool)
		return err
	}
	return exitError{125, fmt.Sprintf("%s: unknown command %q", tool, args[0])}
}

// ---- msb ----

type msbImage struct {
	Reference string `json:"reference"`
	ID        string `json:"id"`
}

// VMRecord is what the stand-in keeps of a VM.
type VMRecord struct {
	Name    string   `json:"name"`
	Image   string   `json:"image"`
	ImageID string   `json:"image_id"`
	Status  string   `json:"status"`
	Conf    string   `json:"conf_sha256"`
	Mounts  []string `json:"mounts"`
	// SecretSHA256 holds, per secret, a digest of the value its variable had
	// at create time (never the value), so tests can tell which source won.
	SecretSHA256 map[string]string `json:"secret_sha256,omitempty"`
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
	case "image":
		if len(args) >= 2 && args[0] == "inspect" {
			var img msbImage
			if err := e.get("msb-images", normRef(args[1]), &img); err != nil {
				return fail("error: image not found: %s", args[1])
			}
			return json.NewEncoder(e.stdout).Encode(img)
		}
	case "load":
		fl, _, _ := flags(args, "--tag", "-t", "--input", "-i")
		data, err := io.ReadAll(e.stdin)
		if err != nil {
			return err
		}
		fields := strings.Fields(string(data))
		if len(fields) != 3 || fields[0] != "FAKE-IMAGE" {
			return fail("error: manifest parse error: archive missing manifest.json or oci-layout")
		}
		refs := []string{normRef(fields[1])}
		for _, t := range append(fl["--tag"], fl["-t"]...) {
			refs = append(refs, normRef(t))
		}
		for _, r := range refs {
			if err := e.put("msb-images", r, msbImage{Reference: r, ID: fields[2]}); err != nil {
				return err
			}
		}
		return nil
	case "volume", "vol":
		if len(args) < 2 {
			break
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
			return e.put("msb-volumes", name, map[string]string{"name": name})
		case "rm", "remove":
			if !e.exists("msb-volumes", name) {
				return fail("error: volume not found: %s", name)
			}
			return os.Remove(e.path("msb-volumes", name))
		}
	case "inspect":
		_, pos, _ := flags(args, "--format")
		if len(pos) != 1 {
			return exitError{2, "error: a sandbox name is required"}
		}
		var vm VMRecord
		if err := e.get("msb-vms", pos[0], &vm); err != nil {
			return fail("error: sandbox not found: %s", pos[0])
		}
		return json.NewEncoder(e.stdout).Encode(vm)
	case "status", "ps":
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
	case "create":
		return e.create(args)
	case "start":
		_, pos, _ := flags(args, "--label")
		for _, n := range pos {
			var vm VMRecord
			if err := e.get("msb-vms", n, &vm); err != nil {
				return fail("error: sandbox not found: %s", n)
			}
			if os.Getenv(NoBootEnv) == "1" {
				return fail("error: failed to start %q\n  → other: sandbox process exited before agent relay became available", n)
			}
			vm.Status = "Running"
			if err := e.put("msb-vms", n, vm); err != nil {
				return err
			}
		}
		return nil
	case "stop":
		_, pos, _ := flags(args, "--label", "--timeout", "-t")
		for _, n := range pos {
			var vm VMRecord
			if err := e.get("msb-vms", n, &vm); err != nil {
				return fail("error: sandbox not found: %s", n)
			}
			if vm.Status != "Running" {
				return fail("error: sandbox %q is not running", n)
			}
			vm.Status = "Stopped"
			if err := e.put("msb-vms", n, vm); err != nil {
				return err
			}
		}
		return nil
	case "remove", "rm":
		fl, pos, _ := flags(args, "--label")
		for _, n := range pos {
			var vm VMRecord
			if err := e.get("msb-vms", n, &vm); err != nil {
				return fail("error: sandbox not found: %s", n)
			}
			if vm.Status == "Running" && fl["--force"] == nil && fl["-f"] == nil {
				return fail("error: sandbox %q is running; stop it or use --force", n)
			}
			if err := os.Remove(e.path("msb-vms", n)); err != nil {
				return err
			}
		}
		return nil
	case "exec":
		_, pos, rest := flags(args, "-u", "--user", "-w", "--workdir", "-e", "--env", "--timeout", "--rlimit")
		if len(pos) != 1 {
			return exitError{2, "error: exec needs a sandbox name"}
		}
		var vm VMRecord
		if err := e.get("msb-vms", pos[0], &vm); err != nil {
			return fail("error: sandbox not found: %s", pos[0])
		}
		if vm.Status != "Running" {
			return fail("error: sandbox %q is not running", pos[0])
		}
		_, err := fmt.Fprintf(e.stdout, "fake-exec[%s]: %s\n", pos[0], strings.Join(rest, " "))
		return err
	case "logs":
		_, pos, _ := flags(args, "--tail", "--since", "--until", "--source")
		if len(pos) != 1 || !e.exists("msb-vms", pos[0]) {
			return fail("error: sandbox not found")
		}
		_, err := fmt.Fprintln(e.stdout, "fake log line")
		return err
	}
	return exitError{2, fmt.Sprintf("error: unrecognized subcommand '%s'", cmd)}
}

func (e *env) create(args []string) error {
	fl, pos, _ := flags(args, "--name", "-n", "--conf", "--secret-conf", "--pull", "--mount-named", "--mount-owned", "--cpus", "-c", "--memory", "-m")
	name := last(fl["--name"])
	if name == "" {
		return exitError{2, "error: --name is required by these tests"}
	}
	conf := last(fl["--conf"])
	raw, err := os.ReadFile(conf)
	if err != nil {
		return fail("error: cannot read config %s", conf)
	}
	var sb schema.Sandbox
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&sb); err != nil {
		return fail("error: invalid sandbox configuration %s: %v", conf, err)
	}
	var digests map[string]string
	image := sb.Image
	if len(pos) > 0 {
		image = pos[0]
	}
	var img msbImage
	if err := e.get("msb-images", normRef(image), &img); err != nil {
		return fail("error: image error: image not cached: %s", normRef(image))
	}
	if sc := last(fl["--secret-conf"]); sc != "" {
		raw, err := os.ReadFile(sc)
		if err != nil {
			return fail("error: cannot read secret config %s", sc)
		}
		var secrets schema.Secrets
		dec := yaml.NewDecoder(bytes.NewReader(raw))
		dec.KnownFields(true)
		if err := dec.Decode(&secrets); err != nil && !errors.Is(err, io.EOF) {
			return fail("error: invalid secret configuration %s: %v", sc, err)
		}
		digests = map[string]string{}
		for n, s := range secrets {
			v, ok := schema.EnvRef(s.Value)
			if !ok {
				continue
			}
			if os.Getenv(v) == "" {
				return fail("error: invalid config: secret %s: host environment variable %s is not set", n, v)
			}
			digests[n] = Digest(os.Getenv(v))
		}
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
	sum := sha256.Sum256(raw)
	vm := VMRecord{Name: name, Image: normRef(image), ImageID: img.ID, Status: "Running", Conf: hex.EncodeToString(sum[:8]),
		Mounts: append(fl["--mount-named"], fl["--mount-owned"]...), SecretSHA256: digests}
	if os.Getenv(NoBootEnv) == "1" {
		vm.Status = "Stopped"
		if err := e.put("msb-vms", name, vm); err != nil {
			return err
		}
		return fail("error: failed to start %q\n  → other: sandbox process exited before agent relay became available", name)
	}
	return e.put("msb-vms", name, vm)
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
