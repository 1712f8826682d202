package e2e

import (
	"context"
	_ "embed"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/testkit/netlab"
	"github.com/agents-sandbox/asb/internal/testkit/testenv"
	"github.com/agents-sandbox/asb/schema"
	"github.com/agents-sandbox/asb/templates"
)

// The real-boot network tests: a small internet inside the nested guest
// (internal/testkit/netlab: a name server and web servers on addresses msb
// classes as public, a test CA the guest trusts; the guest has no network
// device, so nothing leaves it), and microVMs that asb creates for each
// network preset, probing it from inside. One guest session, shared by
// the tests (docs/boot.md, "The network").

//go:embed testdata/net/scenario.sh
var netScenario string

// netLabScript defines lab_up, the lab's preparation of the guest as root
// (the network session's, and the real image's in the nested guest).
//
//go:embed testdata/net/lab.sh
var netLabScript string

// The lab: each name on an address of its own, in an ordinary public
// range (11.0.0.0/8). Not a documentation range: msb 0.7.2's DNS rebind
// protection refuses an answer in TEST-NET-3 (203.0.113.0/24) as "private
// IP", though its policy classes the address as public. The guest has no
// network device, so these addresses exist only on its lo.
var netNames = map[string]string{
	"opencode.ai":        "11.77.0.10", // the agent's model host
	"api.github.com":     "11.77.0.11", // GITHUB_TOKEN's host
	"registry.npmjs.org": "11.77.0.12", // in the balanced profile only
	"denied.example.com": "11.77.0.13", // in no allow list
}

const netDNS = "11.77.0.53"

// netPlain are the lab's plain HTTP listeners beside the names': a private
// address, the metadata address, and the guest's own loopback (the host of
// the microVM, which msb names host.microsandbox.internal).
var netPlain = []string{"10.77.0.7:80", "169.254.169.254:80", "127.0.0.1:8080"}

// netTarget is one destination probed from inside each VM; Check is what
// `asb network check` is asked about it. The same table drives both: a VM
// reaching a target must be exactly what check calls Allowed.
type netTarget struct {
	Key, URL, Check string
}

var netTargets = []netTarget{
	{"model", "https://opencode.ai/", "opencode.ai"},
	{"secret-host", "https://api.github.com/", "api.github.com"},
	{"registry", "https://registry.npmjs.org/", "registry.npmjs.org"},
	{"denied", "https://denied.example.com/", "denied.example.com"},
	{"raw-ip-https", "https://11.77.0.13/", "11.77.0.13"},
	{"raw-ip-http", "http://11.77.0.13/", "11.77.0.13:80"},
	{"private", "http://10.77.0.7/", "10.77.0.7:80"},
	{"metadata", "http://169.254.169.254/", "169.254.169.254:80"},
	{"host-loopback", "http://host.microsandbox.internal:8080/", "host.microsandbox.internal:8080"},
}

var netPresets = []string{schema.NetworkAllow, schema.NetworkBalanced, schema.NetworkPublic, schema.NetworkNone}

// The secrets' values (host-only: secrets.env).
const (
	netSecretOC = "asb-net-secret-oc-4b7e19"
	netSecretGH = "asb-net-secret-gh-90d3aa"
	// OPENCODE_API_KEY's value after the change in secrets.env
	// (TestRealNetSecretRotation).
	netSecretOCNew = "asb-net-secret-oc-new-c2f817"
)

var netSession struct {
	once    sync.Once
	s       *testenv.Session
	skipped bool
}

// netRun runs the network scenario once per test binary.
func netRun(t *testing.T) *testenv.Session {
	t.Helper()
	netSession.once.Do(func() {
		defer func() { netSession.skipped = t.Skipped() }()
		netSession.s = runNetScenario(t)
	})
	if netSession.skipped {
		t.Skip("the network scenario was skipped (see the first network test)")
	}
	if netSession.s == nil {
		t.Fatal("the network scenario could not run (see the first network test)")
	}
	return netSession.s
}

func runNetScenario(t *testing.T) *testenv.Session {
	g := testenv.NewGuest(t, "net")
	if g == nil {
		return nil
	}
	if g.Shape != testenv.ShapeNested {
		// The lab binds addresses and replaces the name server: only in a
		// guest that has no network device.
		t.Skip("the network lab runs only in the nested guest (this host boots by itself)")
	}
	// The guest's data (builds on this host) is bounded here; the guest
	// session itself by its progress (testenv.GuestStall).
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	lab := testenv.StaticNetlab(t)
	image := netImage(t, ctx, g, lab)
	for _, p := range netPresets {
		g.CopyDir(t, "outer-"+p, netOuter(t, ctx, p, image))
	}
	g.AddMSB(t)
	g.AddStaticAsb(t)
	g.WriteFile(t, "bin/netlab", lab, 0o755)
	g.WriteFile(t, "bin/builder", []byte(guestBuilder), 0o755)
	netLabFiles(t, g, nil, netSecretOC, netSecretGH, netSecretOCNew)
	g.WriteFile(t, "net/secrets-rotated.env", []byte("OPENCODE_API_KEY="+netSecretOCNew+"\nGITHUB_TOKEN="+netSecretGH+"\n"), 0o600)
	script := netScenario
	if f := os.Getenv("ASB_NET_SCENARIO"); f != "" {
		// Another scenario, to work on a piece of this one (docs/boot.md).
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		script = string(raw)
	}
	return g.Run(t, context.Background(), bootLib+netLabScript+script)
}

// netLabFiles writes the lab's configuration (with the scripted model,
// when there is one) and the scenario's lists; values are the secrets'
// values the scenario looks for where none may be.
func netLabFiles(t *testing.T, g *testenv.Guest, model *netlab.Model, values ...string) {
	t.Helper()
	conf, ca, err := netlab.NewConfig(netNames, netDNS, netPlain, "/data/net/run/requests.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	conf.Model = model
	raw, err := json.Marshal(conf)
	if err != nil {
		t.Fatal(err)
	}
	addrs := []string{netDNS}
	for _, ip := range netNames {
		addrs = append(addrs, ip)
	}
	for _, a := range netPlain {
		if ip, _, _ := strings.Cut(a, ":"); ip != "127.0.0.1" {
			addrs = append(addrs, ip)
		}
	}
	var urls, checks []string
	for _, tg := range netTargets {
		urls, checks = append(urls, tg.URL), append(checks, tg.Check)
	}
	lines := func(v []string) []byte { return []byte(strings.Join(v, "\n") + "\n") }
	g.WriteFile(t, "net/lab.json", raw, 0o644)
	g.WriteFile(t, "net/ca.pem", ca, 0o644)
	g.WriteFile(t, "net/dns", lines([]string{netDNS}), 0o644)
	g.WriteFile(t, "net/addrs", lines(addrs), 0o644)
	g.WriteFile(t, "net/presets", lines(netPresets), 0o644)
	g.WriteFile(t, "net/urls", lines(urls), 0o644)
	g.WriteFile(t, "net/checks", lines(checks), 0o644)
	g.WriteFile(t, "net/values", lines(values), 0o644)
}

// netImageFiles are the image's extras beside busybox and the probe:
// `secret-probe VAR HEADER URL…` sends "HEADER: Bearer $VAR" (expanded by
// netlab inside the VM from its environment: the placeholder, and no
// command line holds it).
var netImageFiles = map[string]string{
	"rootfs/bin/secret-probe": "#!/bin/sh\nv=$1 h=$2\nshift 2\nexec netlab probe -t 20 -H \"$h=Bearer \\${$v}\" \"$@\"\n",
}

// netImage builds the VMs' image with the real podman on this host and
// saves it to the data disk; it returns the build context (toolchain/).
func netImage(t *testing.T, ctx context.Context, g *testenv.Guest, lab []byte) string {
	t.Helper()
	dir := testenv.BusyboxContext(t)
	writeFile(t, filepath.Join(dir, "rootfs/bin/netlab"), string(lab), 0o755)
	for p, data := range netImageFiles {
		writeFile(t, filepath.Join(dir, p), data, 0o755)
	}
	podman := testenv.CachedPodman(t)
	tag := "localhost/asb-net:test"
	testenv.Run(t, ctx, "", os.Environ(), append(append(append(podman, "build"), testenv.PodmanBuildArgs()...), "--tag", tag, dir)...)
	testenv.Run(t, ctx, "", os.Environ(), append(podman, "save", "-o", filepath.Join(g.Data, "image.tar"), tag)...)
	return dir
}

// netOuter is the folder `asb init --agent opencode --network PRESET`
// writes (with GITHUB_TOKEN bound to api.github.com but for none, which
// takes no secret but the agent's), the image swapped for the test's.
func netOuter(t *testing.T, ctx context.Context, preset, image string) string {
	t.Helper()
	opts := generator.DefaultOptions("opencode", "net-"+preset)
	opts.Network, opts.Memory = preset, "1G"
	env := "OPENCODE_API_KEY=" + netSecretOC + "\n"
	if preset != schema.NetworkNone {
		opts.Secrets = []schema.SecretSpec{{Name: "GITHUB_TOKEN", Hosts: []string{"api.github.com"}}}
		env += "GITHUB_TOKEN=" + netSecretGH + "\n"
	}
	plan, err := generator.Render(templates.FS, opts)
	if err != nil {
		t.Fatalf("render %s: %v", preset, err)
	}
	dir := filepath.Join(t.TempDir(), "net-"+preset)
	if _, err := generator.Apply(ctx, dir, plan, generator.WriteOptions{}); err != nil {
		t.Fatalf("apply %s: %v", preset, err)
	}
	tc := filepath.Join(dir, "toolchain")
	if err := os.RemoveAll(tc); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(tc, os.DirFS(image)); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "secrets.env"), env, 0o600)
	if preset == schema.NetworkAllow && os.Getenv("ASB_NET_DEMO") == "break" {
		netBreak(t, dir)
	}
	return dir
}

// netBreak takes the model host out of the allow list (ASB_NET_DEMO=break,
// docs/boot-network.md): the tests must catch it, with asb network log's line.
func netBreak(t *testing.T, dir string) {
	t.Helper()
	writeFile(t, filepath.Join(dir, "sandbox.yaml"), netBroken(t, dir), 0o644)
	t.Log("ASB_NET_DEMO=break: opencode.ai taken out of the allow preset's network.allow")
}

// netBroken is the folder's sandbox.yaml without opencode.ai in its allow list.
func netBroken(t *testing.T, dir string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "sandbox.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const entry = "    - \"opencode.ai\"\n"
	if !strings.Contains(string(raw), entry) {
		t.Fatalf("sandbox.yaml has no %q", entry)
	}
	return strings.Replace(string(raw), entry, "", 1)
}
