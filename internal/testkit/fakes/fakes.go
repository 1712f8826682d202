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
	"syscall"
)

// StateEnv names the folder holding the fakes' state.
const StateEnv = "ASB_FAKE_STATE"

// Tools are the names the fakes answer to.
var Tools = []string{"msb", "docker", "podman"}

// Recorders are real tools the stand-in can stand in front of: linked
// under their name (LinkRecorders), it records the call and then runs the
// real tool, found on PATH past the link, so that a test can count every
// process a run starts.
var Recorders = []string{"grep", "sh"}

// Dispatch runs the fake named by argv[0] and exits, or returns when argv[0]
// is not one of Tools or Recorders.
func Dispatch() {
	name := filepath.Base(os.Args[0])
	if slices.Contains(Recorders, name) {
		os.Exit(passThrough(name))
	}
	if !slices.Contains(Tools, name) {
		return
	}
	os.Exit(Main(name, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// LinkRecorders puts the Recorders named into bin, links to fake.
func LinkRecorders(fake, bin string, names ...string) error {
	for _, n := range names {
		if !slices.Contains(Recorders, n) {
			return fmt.Errorf("%s is not one of the stand-in's recorders %v", n, Recorders)
		}
		if err := os.Symlink(fake, filepath.Join(bin, n)); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	return nil
}

// passThrough records the call of name and replaces itself with the real
// tool: the first name on PATH that is not a link to this program.
func passThrough(name string) int {
	e := &env{state: os.Getenv(StateEnv)}
	if e.state != "" {
		_ = e.record(append([]string{name}, os.Args[1:]...))
	}
	self, _ := os.Executable()
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		p := filepath.Join(dir, name)
		if real, err := filepath.EvalSymlinks(p); err != nil || real == self {
			continue
		}
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			err := syscall.Exec(p, append([]string{name}, os.Args[1:]...), os.Environ())
			fmt.Fprintf(os.Stderr, "fake %s: %v\n", name, err)
			return 127
		}
	}
	fmt.Fprintf(os.Stderr, "fake %s: no real %s on PATH\n", name, name)
	return 127
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
	// A VM's own process (msb machine, msb hold) is msb's, not a call.
	own := tool == "msb" && len(args) > 0 && (args[0] == "machine" || args[0] == "hold")
	if !own {
		if err := e.record(append([]string{tool}, args...)); err != nil {
			fmt.Fprintf(stderr, "fake %s: %v\n", tool, err)
			return 127
		}
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

// put records v; readers never see half a record (a machine process and
// its create poll one record at once).
func (e *env) put(kind, name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return e.putRaw(kind, name, b)
}

func (e *env) putRaw(kind, name string, b []byte) error {
	p := e.path(kind, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".put-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), p)
}

// names lists the records of kind.
func (e *env) names(kind string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(e.state, kind))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, en := range entries {
		if b, err := hex.DecodeString(en.Name()); err == nil {
			out = append(out, string(b))
		}
	}
	return out, nil
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
