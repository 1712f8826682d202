package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"text/template"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/testenv"
	"github.com/agents-sandbox/asb/schema"
	"github.com/agents-sandbox/asb/templates"
)

// Canary values of the two secrets: they must end up nowhere on disk.
const (
	canaryOpenCode = "asb-canary-opencode-7f3c9a1e"
	canaryGitHub   = "asb-canary-github-2b8d4e6f"
)

// outer is a generated outer folder whose toolchain/ is the busybox stand-in.
type outer struct {
	dir  string
	vars map[string]string // the Taskfile's static vars
	cmds map[string][]string
}

// newOuter renders asb's outer folder for OpenCode (plus a GITHUB_TOKEN
// secret for a second host) into a temp dir, and swaps toolchain/ for the
// busybox build context: the Taskfile, sandbox.yaml and secrets.yaml are
// exactly what `asb init` writes.
func newOuter(t *testing.T, ctx context.Context) *outer {
	t.Helper()
	opts := generator.DefaultOptions("opencode", "e2e")
	opts.Secrets = []schema.SecretSpec{{Name: "GITHUB_TOKEN", Hosts: []string{"api.github.com"}}}
	plan, err := generator.Render(templates.FS, opts)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "e2e")
	if _, err := generator.Apply(ctx, dir, plan, generator.WriteOptions{}); err != nil {
		t.Fatalf("apply: %v", err)
	}
	tc := filepath.Join(dir, "toolchain")
	if err := os.RemoveAll(tc); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(tc, os.DirFS(testenv.BusyboxContext(t))); err != nil {
		t.Fatalf("toolchain/: %v", err)
	}
	o := &outer{dir: dir, vars: map[string]string{}, cmds: map[string][]string{}}
	o.readTaskfile(t)
	return o
}

// readTaskfile reads the static vars and the shell commands of each task
// (entries that call another task are left out: the tests call those
// tasks themselves, in the Taskfile's order).
func (o *outer) readTaskfile(t *testing.T) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(o.dir, "Taskfile.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var tf struct {
		Vars  map[string]any `yaml:"vars"`
		Tasks map[string]struct {
			Cmds []any `yaml:"cmds"`
		} `yaml:"tasks"`
	}
	if err := yaml.Unmarshal(raw, &tf); err != nil {
		t.Fatalf("Taskfile.yml: %v", err)
	}
	for k, v := range tf.Vars {
		if s, ok := v.(string); ok {
			o.vars[k] = s
		}
	}
	for name, task := range tf.Tasks {
		for _, c := range task.Cmds {
			switch c := c.(type) {
			case string:
				o.cmds[name] = append(o.cmds[name], c)
			case map[string]any:
				if s, ok := c["cmd"].(string); ok {
					o.cmds[name] = append(o.cmds[name], s)
				}
			}
		}
	}
}

// command expands one Taskfile command the way go-task does for the
// constructs the Taskfile uses ({{.VAR}} and {{q .VAR}}), with overrides
// replacing the Taskfile's vars.
func (o *outer) command(t *testing.T, tmpl string, overrides map[string]string) string {
	t.Helper()
	vars := map[string]string{}
	for k, v := range o.vars {
		vars[k] = v
	}
	for k, v := range overrides {
		vars[k] = v
	}
	tp, err := template.New("cmd").Option("missingkey=error").Funcs(template.FuncMap{"q": generator.ShellQuote}).Parse(tmpl)
	if err != nil {
		t.Fatalf("Taskfile command %q: %v", tmpl, err)
	}
	var b bytes.Buffer
	if err := tp.Execute(&b, vars); err != nil {
		t.Fatalf("Taskfile command %q: %v", tmpl, err)
	}
	return b.String()
}

// task runs the shell commands of one task with sh in the outer folder.
func (o *outer) task(t *testing.T, ctx context.Context, name string, env []string, overrides map[string]string) (stderr string, err error) {
	t.Helper()
	cmds := o.cmds[name]
	if len(cmds) == 0 {
		t.Fatalf("the Taskfile has no commands for %s", name)
	}
	for _, c := range cmds {
		line := o.command(t, c, overrides)
		start := time.Now()
		_, e, err := testenv.RunErr(ctx, o.dir, env, nil, "sh", "-c", line)
		t.Logf("%s: %s (%v)", name, line, time.Since(start).Round(time.Millisecond))
		if err != nil {
			return string(e), fmt.Errorf("%s: %s: %w\n%s", name, line, err, e)
		}
	}
	return "", nil
}

// canBoot reports whether microVMs can boot here: /dev/kvm and vmx/svm.
func canBoot() bool {
	if _, err := os.Stat("/dev/kvm"); err != nil {
		return false
	}
	raw, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return false
	}
	for line := range strings.SplitSeq(string(raw), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "flags" {
			if slices.Contains(strings.Fields(v), "vmx") || slices.Contains(strings.Fields(v), "svm") {
				return true
			}
		}
	}
	return false
}

func TestRealMSBCreatePodman(t *testing.T) {
	start := time.Now()
	defer func() { t.Logf("TestRealMSBCreatePodman: %v", time.Since(start).Round(time.Millisecond)) }()
	podman := testenv.Podman(t)
	quoted := make([]string, len(podman))
	for i, a := range podman {
		quoted[i] = generator.ShellQuote(a)
	}
	createVM(t, nil, map[string]string{
		"BUILDER":    strings.Join(quoted, " "),
		"BUILD_ARGS": strings.Join(testenv.PodmanBuildArgs(), " "),
	})
}

func TestRealMSBCreateDocker(t *testing.T) {
	start := time.Now()
	defer func() { t.Logf("TestRealMSBCreateDocker: %v", time.Since(start).Round(time.Millisecond)) }()
	docker, env := testenv.Docker(t)
	var dockerEnv []string
	for _, kv := range env {
		if strings.HasPrefix(kv, "DOCKER_") {
			dockerEnv = append(dockerEnv, kv)
		}
	}
	createVM(t, dockerEnv, map[string]string{"BUILDER": generator.ShellQuote(docker)})
}

// createVM runs image:build, image:load, home:create and vm:create of the
// generated Taskfile with the real tools and checks the VM msb recorded.
func createVM(t *testing.T, extraEnv []string, overrides map[string]string) {
	msb := testenv.MSB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	o := newOuter(t, ctx)
	env := testenv.MSBEnv(t)
	msbHome := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "MSB_HOME="); ok {
			msbHome = v
		}
	}
	env = testenv.WithEnv(env, append(extraEnv,
		"OPENCODE_API_KEY="+canaryOpenCode,
		"GITHUB_TOKEN="+canaryGitHub)...)
	// vm:create first runs `{{q .ASB}} validate .`; asb's own validate is
	// tested elsewhere, here it is `true`.
	overrides["ASB"] = "true"
	vm := o.vars["VM"]
	t.Cleanup(func() {
		// Registered after MSB_HOME: runs before it is removed.
		_, _, _ = testenv.RunErr(context.Background(), o.dir, env, nil, msb, "remove", "--force", "--quiet", vm)
	})

	for _, task := range []string{"image:build", "image:load", "home:create"} {
		if _, err := o.task(t, ctx, task, env, overrides); err != nil {
			t.Fatal(err)
		}
	}
	images := testenv.Run(t, ctx, o.dir, env, msb, "image", "ls", "-q")
	if !slices.Contains(strings.Fields(string(images)), o.vars["IMAGE"]) {
		t.Fatalf("msb image ls -q = %q, want the Taskfile's IMAGE %q", images, o.vars["IMAGE"])
	}

	bootStart := time.Now()
	stderr, err := o.task(t, ctx, "vm:create", env, overrides)
	t.Logf("vm:create: %v", time.Since(bootStart).Round(time.Millisecond))
	if canBoot() {
		if err != nil {
			t.Fatalf("this host has KVM and CPU virtualization, yet: %v", err)
		}
	} else {
		if err == nil {
			t.Fatal("vm:create succeeded on a host without KVM/CPU virtualization")
		}
		if !strings.Contains(stderr, `failed to start "`+vm+`"`) || !strings.Contains(stderr, "before agent relay became available") {
			t.Fatalf("vm:create failed, but not at the boot:\n%s", stderr)
		}
		t.Logf("boot failed as expected here (no KVM/CPU virtualization): %s", strings.TrimSpace(stderr))
	}

	inspect := testenv.Run(t, ctx, o.dir, env, msb, "inspect", vm, "--format", "json")
	checkInspect(t, o, inspect)
	for _, canary := range []string{canaryOpenCode, canaryGitHub} {
		if bytes.Contains(inspect, []byte(canary)) {
			t.Errorf("msb inspect shows a secret's value")
		}
	}
	noCanary(t, msbHome)
	noCanary(t, o.dir)
}

// inspected is the part of `msb inspect --format json` the tests read.
type inspected struct {
	Config struct {
		Mounts []struct {
			Type    string `json:"type"`
			Host    string `json:"host"`
			Name    string `json:"name"`
			Guest   string `json:"guest"`
			Options struct {
				Readonly bool `json:"readonly"`
			} `json:"options"`
			Storage struct {
				Kind        string `json:"kind"`
				CapacityMiB int    `json:"capacity_mib"`
			} `json:"storage"`
		} `json:"mounts"`
		Network struct {
			Policy struct {
				DefaultEgress string `json:"default_egress"`
				Rules         []struct {
					Action      string `json:"action"`
					Direction   string `json:"direction"`
					Destination struct {
						Domain string `json:"domain"`
						Group  string `json:"group"`
					} `json:"destination"`
				} `json:"rules"`
			} `json:"policy"`
			Secrets struct {
				Secrets []struct {
					EnvVar       string `json:"env_var"`
					AllowedHosts []struct {
						Exact string `json:"exact"`
					} `json:"allowed_hosts"`
					Source struct {
						Kind string `json:"kind"`
						Var  string `json:"var"`
					} `json:"source"`
					Value *string `json:"value"`
				} `json:"secrets"`
			} `json:"secrets"`
		} `json:"network"`
	} `json:"config"`
}

func checkInspect(t *testing.T, o *outer, raw []byte) {
	t.Helper()
	var got inspected
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("msb inspect: %v\n%s", err, raw)
	}
	cfg := got.Config

	// Mounts: the two binds of sandbox.yaml, the home volume and the
	// container disk of vm:create, nothing else.
	var mounts []string
	for _, m := range cfg.Mounts {
		switch m.Type {
		case "Bind":
			mounts = append(mounts, fmt.Sprintf("bind %s -> %s ro=%v", filepath.Clean(m.Host), m.Guest, m.Options.Readonly))
		case "Named":
			mounts = append(mounts, fmt.Sprintf("named %s -> %s ro=%v", m.Name, m.Guest, m.Options.Readonly))
		case "Owned":
			mounts = append(mounts, fmt.Sprintf("owned %s %dMiB -> %s", m.Storage.Kind, m.Storage.CapacityMiB, m.Guest))
		default:
			mounts = append(mounts, fmt.Sprintf("%s %s -> %s", m.Type, m.Host, m.Guest))
		}
	}
	slices.Sort(mounts)
	want := []string{
		"bind " + filepath.Join(o.dir, "opencode") + " -> /home/dev/.config/opencode ro=true",
		"bind " + filepath.Join(o.dir, "workspace") + " -> /workspace ro=false",
		"named " + o.vars["HOME_VOLUME"] + " -> /home/dev ro=false",
		"owned disk 8192MiB -> /var/lib/containers",
	}
	if !slices.Equal(mounts, want) {
		t.Errorf("mounts:\n  %s\nwant:\n  %s", strings.Join(mounts, "\n  "), strings.Join(want, "\n  "))
	}

	// Egress: deny, with one allow rule per host (the agent's and the secret's).
	pol := cfg.Network.Policy
	if pol.DefaultEgress != "deny" {
		t.Errorf("default_egress = %q, want deny", pol.DefaultEgress)
	}
	var rules []string
	for _, r := range pol.Rules {
		rules = append(rules, fmt.Sprintf("%s %s %s%s", r.Action, r.Direction, r.Destination.Domain, r.Destination.Group))
	}
	slices.Sort(rules)
	if want := []string{"allow egress api.github.com", "allow egress opencode.ai"}; !slices.Equal(rules, want) {
		t.Errorf("network rules = %q, want %q", rules, want)
	}

	// Secrets: env references only, each bound to its own host.
	secrets := map[string]string{}
	for _, s := range cfg.Network.Secrets.Secrets {
		var hosts []string
		for _, h := range s.AllowedHosts {
			hosts = append(hosts, h.Exact)
		}
		if s.Source.Kind != "env" || s.Source.Var != s.EnvVar {
			t.Errorf("secret %s: source %+v, want kind env, var %s", s.EnvVar, s.Source, s.EnvVar)
		}
		if s.Value == nil || *s.Value != "" {
			t.Errorf("secret %s: value %v, want \"\" (the value stays in the environment)", s.EnvVar, s.Value)
		}
		secrets[s.EnvVar] = strings.Join(hosts, ",")
	}
	if want := map[string]string{"OPENCODE_API_KEY": "opencode.ai", "GITHUB_TOKEN": "api.github.com"}; !mapsEqual(secrets, want) {
		t.Errorf("secrets = %v, want %v", secrets, want)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// noCanary fails if any regular file under root (the SQLite db included)
// holds a canary value.
func noCanary(t *testing.T, root string) {
	t.Helper()
	start := time.Now()
	n := 0
	var scanned int64
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		n++
		for _, c := range []string{canaryOpenCode, canaryGitHub} {
			found, read, err := fileContains(p, []byte(c))
			if err != nil {
				return err
			}
			scanned += read
			if found {
				t.Errorf("%s holds a secret's value", p)
			}
		}
		return nil
	})
	if err != nil {
		t.Errorf("scan %s: %v", root, err)
	}
	if n == 0 {
		t.Errorf("scanned no file under %s: the canary check would prove nothing", root)
	}
	t.Logf("no secret value in the %d files under %s (%d KiB of data read, %v)", n, root, scanned>>10, time.Since(start).Round(time.Millisecond))
}

// Linux's lseek whence values for sparse files (macOS swaps them).
const (
	seekData = 3
	seekHole = 4
)

// fileContains reports whether the file at p holds needle. The VM's disks
// are large sparse files (an 8 GiB container disk, a 4 GiB root overlay):
// on Linux only their data extents are read, since holes read as zeros.
func fileContains(p string, needle []byte) (found bool, read int64, err error) {
	f, err := os.Open(p)
	if err != nil {
		return false, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, 0, err
	}
	size := fi.Size()
	type extent struct{ off, end int64 }
	extents := []extent{{0, size}}
	if runtime.GOOS == "linux" {
		extents = nil
		for off := int64(0); off < size; {
			data, err := f.Seek(off, seekData)
			if err != nil { // ENXIO: no data after off (or no SEEK_DATA: see below)
				break
			}
			hole, err := f.Seek(data, seekHole)
			if err != nil {
				hole = size
			}
			extents = append(extents, extent{data, hole})
			off = hole
		}
		if len(extents) == 0 && size > 0 {
			// Either all hole, or SEEK_DATA is unsupported: check which.
			if _, err := f.Seek(0, seekData); err != nil && !errors.Is(err, syscall.ENXIO) {
				extents = []extent{{0, size}}
			}
		}
	}
	buf := make([]byte, 1<<20)
	for _, e := range extents {
		var carry []byte
		for off := e.off; off < e.end; {
			m := int(min(int64(len(buf)), e.end-off))
			k, err := f.ReadAt(buf[:m], off)
			if k == 0 && err != nil {
				return false, read, err
			}
			read += int64(k)
			chunk := append(carry, buf[:k]...)
			if bytes.Contains(chunk, needle) {
				return true, read, nil
			}
			carry = append([]byte(nil), chunk[max(0, len(chunk)-len(needle)+1):]...)
			off += int64(k)
		}
	}
	return false, read, nil
}

func TestFileContains(t *testing.T) {
	dir := t.TempDir()
	sparse := filepath.Join(dir, "disk.raw")
	f, err := os.Create(sparse)
	if err != nil {
		t.Fatal(err)
	}
	// The canary straddles the 65 MiB offset, after a 64 MiB hole.
	const off = 64<<20 + 1<<20 - 5
	if _, err := f.WriteAt([]byte("xx"+canaryGitHub+"yy"), off); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	found, read, err := fileContains(sparse, []byte(canaryGitHub))
	if err != nil || !found {
		t.Errorf("fileContains(sparse file with the canary) = %v, %v", found, err)
	}
	if found, _, _ := fileContains(sparse, []byte(canaryOpenCode)); found {
		t.Error("found a needle that is not there")
	}
	t.Logf("read %d KiB of a 1 GiB sparse file", read>>10)
	if runtime.GOOS == "linux" && read > 64<<20 {
		t.Errorf("read %d bytes: holes were read", read)
	}
}
