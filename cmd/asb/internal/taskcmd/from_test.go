package taskcmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/testkit/fakes"
)

// The --from command computes its value: neither the command line of sh
// nor that of any program it runs holds it.
const (
	fromCommand = `printf 'canary-from-cmd-%s\n' "$(echo 7c3e | tr 7 9)"`
	fromCanary  = "canary-from-cmd-9c3e"
)

// procWatch records, until stop, every process whose command line holds
// value (/proc/*/cmdline, read over and over): a value passed as an
// argument to anything, asb's children or theirs, shows up there.
func procWatch(value string) (stop func() []string) {
	var mu sync.Mutex
	var seen []string
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-done:
				return
			default:
			}
			entries, _ := os.ReadDir("/proc")
			for _, e := range entries {
				raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
				if err == nil && strings.Contains(string(raw), value) {
					mu.Lock()
					seen = append(seen, strings.ReplaceAll(string(raw), "\x00", " "))
					mu.Unlock()
				}
			}
		}
	}()
	return func() []string {
		close(done)
		<-finished
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
}

// TestSecretFromCommand: a secret added with --from gets its value from
// the command, run on the host when the VM is created; the value reaches
// msb in its environment (the stand-in keeps a digest of it) and appears
// in no output, no file (secrets.env included), no recorded command line
// and no process's command line. The command itself is kept outside the
// folder. A failing command stops vm:create with its stderr, never its
// stdout.
func TestSecretFromCommand(t *testing.T) {
	opts := generator.DefaultOptions("opencode", "demo")
	s := newSandbox(t, opts)
	out, errOut, code := s.run("", "secret", "add", "GITHUB_TOKEN", "--allow", "api.github.com", "--from", fromCommand)
	if code != 0 {
		t.Fatalf("secret add --from: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "kept on this host only") {
		t.Errorf("secret add --from does not say where the command is kept:\n%s", out)
	}
	for _, f := range []string{"secrets.env", "secrets.yaml", "sandbox.yaml", "Taskfile.yml", "asb.yaml"} {
		raw, _ := os.ReadFile(filepath.Join(s.dir, f))
		if strings.Contains(string(raw), "tr 7 9") {
			t.Errorf("%s holds the command: it belongs to this host, not the folder a clone gets", f)
		}
	}
	out, _, _ = s.run("", "secret", "ls")
	if !strings.Contains(out, "set (command)") {
		t.Errorf("secret ls does not say the value comes from a command:\n%s", out)
	}

	stop := procWatch(fromCanary)
	out, errOut, code = s.run("", "task", "--yes", "vm:create")
	args := stop()
	if code != 0 {
		t.Fatalf("vm:create: exit %d\n%s%s", code, out, errOut)
	}
	for _, a := range args {
		t.Errorf("a process had the value in its command line: %s", a)
	}
	vm, err := fakes.VM(s.state, s.identity().VM)
	if err != nil {
		t.Fatal(err)
	}
	if got := vm.SecretSHA256["GITHUB_TOKEN"]; got != fakes.Digest(fromCanary) {
		t.Errorf("msb create got GITHUB_TOKEN with digest %q, want the command's value (%q)", got, fakes.Digest(fromCanary))
	}
	outputs := out + errOut
	o2, e2, code := s.run("", "task", "--yes", "agent")
	if code != 0 {
		t.Errorf("agent after vm:create: exit %d\n%s%s", code, o2, e2)
	}
	outputs += o2 + e2
	for _, args := range [][]string{{"boundary"}, {"boundary", "--format", "json"}, {"validate"}, {"task", "--verbose", "--dry", "vm:create"}} {
		o, e, _ := s.run("", args...)
		outputs += o + e
	}
	if strings.Contains(outputs, fromCanary) {
		t.Errorf("the value was printed:\n%s", outputs)
	}
	calls, _ := fakes.Calls(s.state)
	for _, c := range calls {
		if strings.Contains(c.String(), fromCanary) {
			t.Errorf("a stand-in was called with the value: %s", c)
		}
	}
	for _, root := range []string{s.dir, s.state, os.Getenv("HOME"), os.Getenv("XDG_STATE_HOME")} {
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			if raw, _ := os.ReadFile(p); strings.Contains(string(raw), fromCanary) {
				t.Errorf("%s holds the value", p)
			}
			return nil
		})
	}

	// A failing command stops vm:create: its stderr is shown, its stdout
	// (computed, so not in the command either) never.
	failing := `printf 'partial-%s\n' "$(echo 42 | tr 4 5)"; echo "token expired, run gh auth login" >&2; exit 3`
	if _, e, code := s.run("", "secret", "add", "GITHUB_TOKEN", "--allow", "api.github.com", "--from", failing, "--force"); code != 0 {
		t.Fatalf("secret add --from --force: exit %d\n%s", code, e)
	}
	s.calls()
	out, errOut, code = s.run("", "task", "--yes", "--force", "vm:create")
	if code == 0 {
		t.Fatalf("vm:create with a failing secret command succeeded:\n%s%s", out, errOut)
	}
	for _, want := range []string{"token expired, run gh auth login", "the command of secret GITHUB_TOKEN", "exit status 3"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(out+errOut, "partial-52") {
		t.Errorf("the failing command's stdout was shown:\n%s%s", out, errOut)
	}
	for _, c := range summary(s.calls()) {
		if c == "msb create" {
			t.Errorf("msb create ran although the secret's command failed")
		}
	}
}
