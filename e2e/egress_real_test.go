package e2e

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/agents-sandbox/asb/internal/testkit/testenv"
	"github.com/agents-sandbox/asb/runner"
	"github.com/agents-sandbox/asb/schema"
)

// egressCases are sandbox.yaml network forms; each is created with the
// real msb and its resolved policy compared with asb's.
var egressCases = []struct{ name, yaml string }{
	{"allow-list", "network:\n  allow: [example.com, \"*.github.com\"]\n"},
	{"apex-vs-suffix", "network:\n  allow: [\"*.example.com\", example.org, \"domain=exact.net\", \"suffix=suf.net\", \"EXAMPLE.io.\"]\n"},
	{"public-deny", "network:\n  policy: public\n  deny: [evil.com]\n"},
	{"none", "network: none\n"},
	{"public", "network: public\n"},
	{"open", "network: open\n"},
	{"deny-over-allow", "network:\n  allow: [\"*.example.com\"]\n  deny: [bad.example.com]\n"},
	{"ports", "network:\n  allow: [\"example.com:tcp:443\", \"*.example.net:udp:1000-2000\", \"1.2.3.0/24:any\", \"api.example.org:tcp\", \"dns\", \"public\"]\n"},
	{"policy-open", "network:\n  policy: open\n"},
	{"public-allow-deny", "network:\n  policy: public\n  allow: [\"10.0.0.5:tcp:5432\", \"private\"]\n  deny: [\"*.ads.example.com\", \"169.254.169.254\"]\n"},
	{"open-allow", "network:\n  policy: open\n  allow: [example.com]\n"},
	{"none-allow", "network:\n  policy: none\n  allow: [example.com]\n"},
	{"none-deny", "network:\n  policy: none\n  deny: [example.com]\n"},
	{"open-deny", "network:\n  policy: open\n  deny: [evil.com]\n"},
	{"deny-only", "network:\n  deny: [\"*.ads.example.com\"]\n"},
	{"empty-object", "network: {}\n"},
	{"no-network-key", "cpus: 1\n"},
}

// egressProbes are the destinations every case is judged on.
var egressProbes = []struct {
	host string
	port int
}{
	{"opencode.ai", 443}, {"example.com", 443}, {"example.com", 80}, {"api.example.com", 443},
	{"a.b.example.com", 443}, {"bad.example.com", 443}, {"badexample.com", 443}, {"github.com", 443},
	{"api.github.com", 443}, {"badgithub.com", 443}, {"evil.com", 443}, {"ads.example.com", 443},
	{"x.ads.example.com", 443}, {"example.net", 1500}, {"api.example.org", 443}, {"api.example.org", 22},
	{"example.org", 443}, {"www.example.org", 443}, {"exact.net", 443}, {"x.exact.net", 443},
	{"suf.net", 443}, {"a.suf.net", 443}, {"example.io", 443}, {"10.0.0.5", 5432}, {"10.0.0.5", 22},
	{"1.2.3.4", 443}, {"169.254.169.254", 80}, {"127.0.0.1", 22}, {"8.8.8.8", 53},
}

// TestRealEgressAgreesWithMsb creates a VM of each case with the real msb
// (a tiny image, --pull never), reads the policy msb resolved from `msb
// inspect` while the VM is Starting (no boot is waited for: the boot is
// ended, the VM removed), and checks that asb resolves the same rules and
// default, and that asb's verdict on every probe is the one a matcher of
// msb's semantics gives on msb's own rules.
func TestRealEgressAgreesWithMsb(t *testing.T) {
	msb := testenv.MSB(t)
	env := testenv.MSBEnv(t)
	home := envOf(env, "MSB_HOME")
	testenv.KillMachinesAtCleanup(t, home)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	image := loadTinyImage(t, ctx, msb, env)
	var public *msbPolicy // what msb's default (no policy) is: the public profile
	for i, c := range egressCases {
		t.Run(c.name, func(t *testing.T) {
			rec := createAndInspect(t, ctx, msb, env, home, image, fmt.Sprintf("eg%d", i), c.yaml, nil)
			pol := rec.Config.Network.Policy
			if c.name == "public" {
				public = pol
			}
			if pol == nil { // msb's default, the public profile
				if public == nil {
					public = createAndInspect(t, ctx, msb, env, home, image, "egpublic", "network: public\n", nil).Config.Network.Policy
				}
				pol = public
			}
			nw := rawNetwork(t, c.yaml)
			asb := schema.Egress(nw)
			if got, want := asbRules(asb), pol.normal(); !slices.Equal(got, want) || asb.DefaultAllow != (pol.DefaultEgress == "allow") {
				t.Errorf("rules: asb %q default allow %v; msb %q default %s", got, asb.DefaultAllow, want, pol.DefaultEgress)
			}
			for _, p := range egressProbes {
				d := asb.Decide(p.host, p.port)
				if want := pol.decide(p.host, p.port); d.Allowed != want {
					t.Errorf("%s:%d: asb says %v (%s); msb's rules say %v", p.host, p.port, d.Allowed, d.Why, want)
				}
			}
		})
	}
}

// TestRealNetLogLevel checks what asb network log reads of a real VM: msb
// records --log-level debug in config.runtime.log_level (null without
// it), and its log of the VM reads without error.
func TestRealNetLogLevel(t *testing.T) {
	msb := testenv.MSB(t)
	env := testenv.MSBEnv(t)
	home := envOf(env, "MSB_HOME")
	t.Setenv("MSB_HOME", home) // runner.MSB runs msb in this process's environment
	testenv.KillMachinesAtCleanup(t, home)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	image := loadTinyImage(t, ctx, msb, env)
	m := runner.MSB{Bin: msb}
	for _, c := range []struct {
		vm    string
		flags []string
		level string
	}{{"lvdebug", []string{"--log-level", "debug"}, "debug"}, {"lvdefault", nil, ""}} {
		createAndInspect(t, ctx, msb, env, home, image, c.vm, "network:\n  allow: [example.com]\n", func() {
			level, found, err := m.LogLevel(ctx, c.vm)
			if err != nil || !found || level != c.level {
				t.Errorf("%s: LogLevel = %q, %v, %v; want %q", c.vm, level, found, err, c.level)
			}
			r, err := runner.ReadNetLog(ctx, m, c.vm, time.Now().Add(-time.Hour))
			if err != nil || r.Debug() != (c.level == "debug") {
				t.Errorf("%s: ReadNetLog: %+v, %v", c.vm, r, err)
			}
		}, c.flags...)
	}
	var nv *runner.NoVMError
	if _, err := runner.ReadNetLog(ctx, m, "no-such-vm", time.Time{}); !errors.As(err, &nv) {
		t.Errorf("ReadNetLog of a VM msb does not have: %v, want a NoVMError", err)
	}
}

// msbRecord is the part of `msb inspect --format json` read here.
type msbRecord struct {
	Status string `json:"status"`
	Config struct {
		Network struct {
			Policy *msbPolicy `json:"policy"`
		} `json:"network"`
	} `json:"config"`
}

// createAndInspect starts `msb create` of conf, reads msb's record while
// the VM is Starting, then ends the boot (msb's remove waits for one),
// calls then (when not nil) and removes the VM.
func createAndInspect(t *testing.T, ctx context.Context, msb string, env []string, home, image, vm, conf string, then func(), flags ...string) msbRecord {
	t.Helper()
	raw := createAndInspectRaw(t, ctx, msb, env, home, image, vm, conf, then, flags...)
	var rec msbRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatalf("msb inspect %s: %v\n%s", vm, err, raw)
	}
	return rec
}

// createAndInspectRaw is createAndInspect's msb record as msb printed it.
func createAndInspectRaw(t *testing.T, ctx context.Context, msb string, env []string, home, image, vm, conf string, then func(), flags ...string) []byte {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "sandbox.yaml")
	if err := os.WriteFile(p, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	argv := append([]string{msb, "create", image, "--name", vm, "--pull", "never", "--conf", p}, flags...)
	create, raw, err := startAndPoll(t, ctx, dir, env, msb, vm, argv)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		for _, pid := range testenv.Machines(vm, home) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if done(create) {
			break
		}
		if time.Now().After(deadline) {
			_ = create.Interrupt()
			break
		}
	}
	create.Wait(ctx)
	if then != nil {
		then()
	}
	testenv.Run(t, ctx, dir, env, msb, "remove", "--force", "--quiet", vm)
	return raw
}

// startAndPoll starts the create argv and returns msb's record of vm,
// read while it is in flight (testenv.StartPolling). Its second create,
// after one msb's own database refused, replaces what msb kept of the
// first (msb answered "sandbox already exists" in ci7 of 2026-12-06).
func startAndPoll(t *testing.T, ctx context.Context, dir string, env []string, msb, vm string, argv []string) (*testenv.Proc, []byte, error) {
	t.Helper()
	return testenv.StartPolling(t, ctx, msb, env, vm, func(retry bool) *testenv.Proc {
		if retry {
			return testenv.Start(t, dir, env, append(slices.Clone(argv), "--replace")...)
		}
		return testenv.Start(t, dir, env, argv...)
	})
}

func done(p *testenv.Proc) bool {
	select {
	case <-p.Done():
		return true
	default:
		return false
	}
}

func envOf(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
}

// rawNetwork reads the network of a case as asb network check does.
func rawNetwork(t *testing.T, conf string) *schema.Network {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(conf), &doc); err != nil {
		t.Fatal(err)
	}
	var n *yaml.Node
	for i := 0; i+1 < len(doc.Content[0].Content); i += 2 {
		if doc.Content[0].Content[i].Value == "network" {
			n = doc.Content[0].Content[i+1]
		}
	}
	nw, err := schema.RawNetwork(n)
	if err != nil {
		t.Fatal(err)
	}
	return nw
}

// loadTinyImage loads a one-layer image archive made here (a file or two:
// nothing in it runs before the boot is ended) into msb.
func loadTinyImage(t *testing.T, ctx context.Context, msb string, env []string) string {
	t.Helper()
	layer := tarOf(t, map[string]string{"etc/passwd": "root:x:0:0:root:/root:/bin/sh\n", "etc/hostname": "asb-egress\n"})
	sum := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
	cfg, _ := json.Marshal(map[string]any{"architecture": runtime.GOARCH, "os": "linux", "config": map[string]any{},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{"sha256:" + sum(layer)}}})
	manifest, _ := json.Marshal([]map[string]any{{"Config": sum(cfg) + ".json", "Layers": []string{sum(layer) + ".tar"}}})
	archive := tarOf(t, map[string]string{sum(layer) + ".tar": string(layer), sum(cfg) + ".json": string(cfg), "manifest.json": string(manifest)})
	const image = "localhost/asb-egress:1"
	if _, stderr, err := testenv.RunErr(ctx, "", env, archive, msb, "load", "--quiet", "--tag", image); err != nil {
		t.Fatalf("msb load: %v\n%s", err, stderr)
	}
	return image
}

func tarOf(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(files[n])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(files[n])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// msbPolicy is config.network.policy as msb 0.7.2 records it.
type msbPolicy struct {
	DefaultEgress string    `json:"default_egress"`
	Rules         []msbRule `json:"rules"`
}

type msbRule struct {
	Action      string          `json:"action"`
	Direction   string          `json:"direction"`
	Destination json.RawMessage `json:"destination"` // "any", or {"domain"|"domain_suffix"|"cidr"|"group": value}
	Protocols   []string        `json:"protocols"`
	Ports       []struct {
		Start int `json:"start"`
		End   int `json:"end"`
	} `json:"ports"`
}

// dest is the rule's destination as kind and value ("any", "").
func (r msbRule) dest() (kind, value string) {
	var any string
	if json.Unmarshal(r.Destination, &any) == nil {
		return any, ""
	}
	var m map[string]string
	_ = json.Unmarshal(r.Destination, &m)
	for k, v := range m {
		return k, v
	}
	return "", ""
}

func (r msbRule) protoPort(proto string, port int) bool {
	if len(r.Protocols) > 0 && !slices.Contains(r.Protocols, proto) {
		return false
	}
	return len(r.Ports) == 0 || slices.ContainsFunc(r.Ports, func(p struct {
		Start int `json:"start"`
		End   int `json:"end"`
	}) bool {
		return p.Start <= port && port <= p.End
	})
}

// normal writes each egress rule as one comparable line.
func (p *msbPolicy) normal() []string {
	var out []string
	for _, r := range p.Rules {
		if r.Direction == "ingress" {
			continue
		}
		k, v := r.dest()
		ports := ""
		for _, pr := range r.Ports {
			ports += fmt.Sprintf("%d-%d", pr.Start, pr.End)
		}
		out = append(out, fmt.Sprintf("%s %s=%s %s %s", r.Action, k, v, strings.Join(r.Protocols, ","), ports))
	}
	return out
}

// asbRules writes asb's rules as normal writes msb's.
func asbRules(p schema.EgressPolicy) []string {
	var out []string
	for _, r := range p.Rules {
		action := map[bool]string{true: "allow", false: "deny"}[r.Allow]
		k, v := "any", ""
		switch {
		case r.Domain != "":
			k, v = "domain", r.Domain
		case r.Suffix != "":
			k, v = "domain_suffix", r.Suffix
		case r.CIDR.IsValid():
			k, v = "cidr", r.CIDR.String()
		case r.Group != "":
			k, v = "group", r.Group
		}
		ports := ""
		for _, pr := range r.Ports {
			ports += fmt.Sprintf("%d-%d", pr[0], pr[1])
		}
		out = append(out, fmt.Sprintf("%s %s=%s %s %s", action, k, v, strings.Join(r.Protocols, ","), ports))
	}
	return out
}

// probeGroups are msb's groups of the probes' addresses.
var probeGroups = map[string]string{"10.0.0.5": "private", "1.2.3.4": "public", "169.254.169.254": "metadata",
	"127.0.0.1": "loopback", "8.8.8.8": "public"}

// decide is msb 0.7.2's verdict on a TCP connection to host:port under p,
// written from msb's policy code (first matching egress rule, else the
// default): an address is matched by any, CIDR and group rules; a name is
// first looked up (its domain or domain_suffix rule — which takes in the
// suffix itself — or a rule that lets DNS to the host through), then
// connected to (its name rule on the port, or any or public, the name
// taken to resolve to a public address).
func (p *msbPolicy) decide(host string, port int) bool {
	first := func(match func(r msbRule, kind, value string) bool) bool {
		for _, r := range p.Rules {
			if k, v := r.dest(); r.Direction != "ingress" && match(r, k, v) {
				return r.Action == "allow"
			}
		}
		return p.DefaultEgress == "allow"
	}
	nameIs := func(kind, value string) bool {
		return kind == "domain" && value == host ||
			kind == "domain_suffix" && (host == value || strings.HasSuffix(host, "."+value))
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return first(func(r msbRule, kind, value string) bool {
			pre, perr := netip.ParsePrefix(value)
			hit := kind == "any" || kind == "cidr" && perr == nil && pre.Contains(ip) || kind == "group" && value == probeGroups[host]
			return hit && r.protoPort("tcp", port)
		})
	}
	looked := first(func(r msbRule, kind, value string) bool {
		return nameIs(kind, value) || (kind == "any" || kind == "group" && value == "host") && r.protoPort("udp", 53)
	})
	return looked && first(func(r msbRule, kind, value string) bool {
		return (nameIs(kind, value) || kind == "any" || kind == "group" && value == "public") && r.protoPort("tcp", port)
	})
}
