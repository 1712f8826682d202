package servecmd

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/testkit/fakes"
	"github.com/agents-sandbox/asb/internal/testkit/testenv"
	"github.com/agents-sandbox/asb/runner"
	"github.com/agents-sandbox/asb/serve"
	"github.com/agents-sandbox/asb/templates"
)

var fakeBin string

func TestMain(m *testing.M) {
	clean := testenv.PrivateState()
	dir, err := os.MkdirTemp("", "asb-fakes-")
	if err != nil {
		panic(err)
	}
	if fakeBin, err = fakes.Build(dir); err != nil {
		panic(err)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	clean()
	os.Exit(code)
}

// machine is a host with the msb stand-in, shared by the folders of a test.
type machine struct {
	t       *testing.T
	base    string
	state   string
	clients [][]string // argv of each client run, then its environment
	envs    [][]string
}

func newMachine(t *testing.T) *machine {
	base := t.TempDir()
	m := &machine{t: t, base: base, state: filepath.Join(base, "fake-state")}
	bin := filepath.Join(base, "bin")
	if err := fakes.Link(fakeBin, bin); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv(fakes.StateEnv, m.state)
	t.Setenv(fakes.NoBootEnv, "")
	t.Setenv(fakes.BootEnv, "")
	t.Setenv("XDG_STATE_HOME", filepath.Join(base, "xdg-state"))
	t.Setenv("HOME", filepath.Join(base, "home"))
	t.Setenv(serve.PasswordVar, "")
	return m
}

func (m *machine) folder(name string) string {
	m.t.Helper()
	dir := filepath.Join(m.base, name)
	plan, err := generator.Render(templates.FS, generator.DefaultOptions("opencode", name))
	if err != nil {
		m.t.Fatal(err)
	}
	if _, err := generator.Apply(context.Background(), dir, plan, generator.WriteOptions{}); err != nil {
		m.t.Fatal(err)
	}
	return dir
}

func (m *machine) vm(dir string) string {
	id, err := runner.ResolveIdentity(dir, "opencode", runner.IdentityOptions{Now: time.Now()})
	if err != nil {
		m.t.Fatal(err)
	}
	return id.VM
}

// vmStart does what asb task vm:start does to msb that matters here: the
// image loaded, the VM created with msb-conf's flags (serve.Flags) and
// running.
func (m *machine) vmStart(ctx context.Context, dir, name string) error {
	vm := m.vm(dir)
	if _, err := fakes.VM(m.state, vm); err == nil {
		return nil
	}
	if _, err := runner.OutputEnv(ctx, dir, nil, "sh", "-c", "echo FAKE-IMAGE img:1 sha256:1 | msb load --tag img:1"); err != nil {
		return err
	}
	flags, err := serve.Flags(dir)
	if err != nil {
		return err
	}
	_, err = runner.Output(ctx, dir, "msb", append([]string{"create", "img:1", "--name", vm, "--replace", "--conf", "sandbox.yaml"}, flags...)...)
	return err
}

// up is a server that answers once msb exec handed the VM forwarding the
// URL's port this password on its stdin.
func (m *machine) up(_ context.Context, s serve.Server) (bool, error) {
	port, _ := strconv.Atoi(s.URL[strings.LastIndex(s.URL, ":")+1:])
	for _, dir := range m.folders() {
		vm := m.vm(dir)
		rec, err := fakes.VM(m.state, vm)
		if err != nil || len(rec.Config.Network.Ports) == 0 || rec.Config.Network.Ports[0].HostPort != port {
			continue
		}
		got, err := fakes.ExecStdin(m.state, vm)
		return err == nil && got == fakes.Digest(s.Password+"\n"), nil
	}
	return false, nil
}

func (m *machine) folders() []string {
	var out []string
	for _, n := range []string{"alpha", "beta"} {
		if _, err := os.Stat(filepath.Join(m.base, n)); err == nil {
			out = append(out, filepath.Join(m.base, n))
		}
	}
	return out
}

// run runs asb serve or asb attach in dir with the stand-ins.
func (m *machine) run(dir string, attach bool, args ...string) (string, string, error) {
	var out, errOut bytes.Buffer
	f := &cmdutil.Factory{IO: &cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
		Templates: templates.FS, Getwd: func() (string, error) { return dir, nil }, Getenv: os.Getenv, Now: time.Now}
	opts := defaults(f)
	opts.RunTask, opts.Up, opts.Wait = m.vmStart, m.up, 5*time.Second
	opts.LookPath = func(string) (string, error) { return "/host/bin/opencode", nil }
	opts.RunClient = func(_ context.Context, argv, env []string) error {
		m.clients = append(m.clients, argv)
		m.envs = append(m.envs, env)
		return nil
	}
	cmd := newServe(opts)
	if attach {
		cmd = newAttach(opts)
	}
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

func (m *machine) execs() int {
	calls, err := fakes.Calls(m.state)
	if err != nil {
		m.t.Fatal(err)
	}
	n := 0
	for _, c := range calls {
		if len(c) > 1 && c[0] == "msb" && c[1] == "exec" {
			n++
		}
	}
	return n
}

// TestServeAndAttach: asb serve forwards a claimed port of 127.0.0.1 only
// to the server, started with the password on its stdin; two attaches
// reuse it; a second folder gets another port; the password is in no
// output, argv or file but secrets.env.
func TestServeAndAttach(t *testing.T) {
	m := newMachine(t)
	a := m.folder("alpha")
	// Another sandbox of msb's, stopped, forwards the port alpha would try
	// first: it binds it again when it starts, so alpha must not take it.
	taken := serve.StartPort(a)
	if _, err := runner.Output(context.Background(), a, "sh", "-c", "echo FAKE-IMAGE img:1 sha256:1 | msb load --tag img:1 && msb create img:1 --name stranger --conf sandbox.yaml --port 127.0.0.1:"+strconv.Itoa(taken)+":80 && msb stop stranger"); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := m.run(a, false)
	if err != nil {
		t.Fatalf("asb serve: %v\n%s%s", err, out, errOut)
	}
	rec, ok, err := serve.Load(a)
	if err != nil || !ok {
		t.Fatalf("no serve record: %v", err)
	}
	vm, err := fakes.VM(m.state, m.vm(a))
	if err != nil {
		t.Fatal(err)
	}
	if rec.Port == taken {
		t.Fatalf("port %d taken though another sandbox forwards it", taken)
	}
	want := fakes.Forward{GuestPort: 4096, HostBind: "127.0.0.1", HostPort: rec.Port, Protocol: "tcp"}
	if !slices.Equal(vm.Config.Network.Ports, []fakes.Forward{want}) {
		t.Fatalf("msb was given the forwards %+v, want only %+v", vm.Config.Network.Ports, want)
	}
	if !strings.Contains(out, "serving at http://127.0.0.1:"+strconv.Itoa(rec.Port)) {
		t.Fatalf("asb serve said:\n%s", out)
	}
	for i := range 2 {
		o, e, err := m.run(a, true)
		if err != nil {
			t.Fatalf("asb attach %d: %v\n%s%s", i, err, o, e)
		}
		out, errOut = out+o, errOut+e
	}
	if n := m.execs(); n != 1 {
		t.Fatalf("%d msb exec calls: the attaches started the server again", n)
	}
	pw := serve.EnvValue(must(os.ReadFile(filepath.Join(a, "secrets.env"))), serve.PasswordVar)
	if len(pw) < 40 {
		t.Fatalf("secrets.env's password %d characters long", len(pw))
	}
	if fi, _ := os.Stat(filepath.Join(a, "secrets.env")); fi.Mode().Perm() != 0o600 {
		t.Fatalf("secrets.env mode %v", fi.Mode())
	}
	url := "http://127.0.0.1:" + strconv.Itoa(rec.Port)
	if len(m.clients) != 2 {
		t.Fatalf("%d clients ran, want 2", len(m.clients))
	}
	for i, argv := range m.clients {
		if !slices.Equal(argv, []string{"/host/bin/opencode", "attach", url}) || !slices.Equal(m.envs[i], []string{"OPENCODE_SERVER_PASSWORD=" + pw}) {
			t.Fatalf("client %d: argv %q", i, argv)
		}
	}
	b := m.folder("beta")
	if o, e, err := m.run(b, false); err != nil {
		t.Fatalf("asb serve in beta: %v\n%s%s", err, o, e)
	}
	rb, _, _ := serve.Load(b)
	if rb.Port == rec.Port {
		t.Fatalf("two folders serve on port %d", rb.Port)
	}
	noCanary(t, m.base, pw, out+errOut, filepath.Join(a, "secrets.env"))
}

// noCanary fails if pw is in the output or any file under base but keep.
func noCanary(t *testing.T, base, pw, output, keep string) {
	t.Helper()
	if strings.Contains(output, pw) {
		t.Fatal("the password is in asb's output")
	}
	_ = filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || p == keep || d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(pw)) {
			t.Errorf("the password is in %s", p)
		}
		return nil
	})
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
