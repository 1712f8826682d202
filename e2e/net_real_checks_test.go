package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agents-sandbox/asb/internal/testkit/netlab"
	"github.com/agents-sandbox/asb/internal/testkit/testenv"
)

// netProbes reads a probe step's JSON lines, by URL.
func netProbes(t *testing.T, s *testenv.Session, step string) map[string]netlab.Result {
	t.Helper()
	out := map[string]netlab.Result{}
	for _, l := range strings.Split(strings.TrimSpace(s.Step(t, step).Out), "\n") {
		var r netlab.Result
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%s: %q: %v\n%s", step, l, err, s.Steps[step].Err)
		}
		out[r.URL] = r
	}
	return out
}

// netChecks reads the checks step: target -> (allowed, verdict).
func netChecks(t *testing.T, s *testenv.Session, preset string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(ok(t, s, preset+"_checks")), "\n") {
		target, rest, _ := strings.Cut(l, " ")
		out[target] = rest
	}
	return out
}

// netLogLines are the lines of `asb network log` of preset that name host.
func netLogLines(s *testenv.Session, preset, host string) string {
	var b strings.Builder
	for _, l := range strings.Split(s.Steps[preset+"_log"].Out, "\n") {
		if host != "" && strings.Contains(l, host) {
			b.WriteString("\n    " + strings.TrimSpace(l))
		}
	}
	if b.Len() == 0 {
		return " (asb network log has no line for it)"
	}
	return b.String()
}

func hostOf(target string) string {
	h, _, _ := strings.Cut(target, ":")
	return h
}

// TestRealNetEgressAgreesWithCheck: for each network preset, each target
// of the table is reached from inside the VM exactly when `asb network
// check` says Allowed.
func TestRealNetEgressAgreesWithCheck(t *testing.T) {
	s := netRun(t)
	for _, p := range netPresets {
		ok(t, s, p+"_create")
		checks := netChecks(t, s, p)
		probes := netProbes(t, s, p+"_probe")
		for _, tg := range netTargets {
			verdict, pr := checks[tg.Check], probes[tg.URL]
			allowed := strings.HasPrefix(verdict, "0 Allowed:")
			t.Logf("%-8s %-14s check %-8v vm %-5v %s", p, tg.Key, allowed, pr.Reached, netWhy(pr))
			if allowed != pr.Reached {
				t.Errorf("--network %s, %s: asb network check %s says %q, but from inside the VM %s reached=%v (%s); asb network log:%s",
					p, tg.Key, tg.Check, verdict, tg.URL, pr.Reached, netWhy(pr), netLogLines(s, p, hostOf(tg.Check)))
			}
		}
	}
}

func netWhy(r netlab.Result) string {
	if r.Reached {
		return fmt.Sprintf("status %d, issuer %q", r.Status, r.Issuer)
	}
	return fmt.Sprintf("%s: %s", r.Stage, r.Err)
}

// TestRealNetPromises: what each preset promises, whatever check says: the
// model host and the secret's host answer under allow, balanced and
// public; nothing answers under none; under allow, the denied name, raw
// IPs, the private and metadata addresses and the host's loopback do not.
func TestRealNetPromises(t *testing.T) {
	s := netRun(t)
	want := map[string]map[string]bool{
		"allow":    {"model": true, "secret-host": true, "registry": false, "denied": false, "raw-ip-https": false, "raw-ip-http": false, "private": false, "metadata": false, "host-loopback": false},
		"balanced": {"model": true, "secret-host": true, "registry": true, "denied": false, "private": false, "metadata": false, "host-loopback": false},
		"public":   {"model": true, "secret-host": true, "registry": true, "denied": true, "private": false, "metadata": false, "host-loopback": false},
		"none":     {},
	}
	for _, p := range netPresets {
		probes := netProbes(t, s, p+"_probe")
		for _, tg := range netTargets {
			w, known := want[p][tg.Key]
			if p == "none" {
				w, known = false, true
			}
			if got := probes[tg.URL]; known && got.Reached != w {
				t.Errorf("--network %s: %s (%s) reached=%v, want %v (%s); asb network log:%s",
					p, tg.Key, tg.URL, got.Reached, w, netWhy(got), netLogLines(s, p, hostOf(tg.Check)))
			}
		}
	}
}

// TestRealNetLearnProposesTheDenied: asb network learn, on msb's real log
// of the allow preset's session, proposes exactly the names the VM was
// refused (not addresses, not *.internal).
func TestRealNetLearnProposesTheDenied(t *testing.T) {
	s := netRun(t)
	for _, p := range []string{"allow", "balanced"} {
		probes := netProbes(t, s, p+"_probe")
		var want []string
		for _, tg := range netTargets {
			h := hostOf(tg.Check)
			if !probes[tg.URL].Reached && strings.ContainsAny(h, "abcdefghijklmnopqrstuvwxyz") && !strings.HasSuffix(h, ".internal") && !slices.Contains(want, h) {
				want = append(want, h)
			}
		}
		slices.Sort(want)
		got := netProposed(ok(t, s, p+"_learn"))
		if !slices.Equal(got, want) {
			t.Errorf("--network %s: asb network learn proposes %q, want the names refused %q:\n%s", p, got, want, s.Steps[p+"_learn"].Out)
		}
	}
}

// netProposed reads the proposals of asb network learn's listing.
func netProposed(out string) []string {
	var got []string
	in := false
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "Hosts msb refused"):
			in = true
		case in && strings.HasPrefix(l, "  ") && strings.Contains(l, " refused "):
			got = append(got, strings.Fields(l)[0])
		case in && !strings.HasPrefix(l, "  "):
			in = false
		}
	}
	slices.Sort(got)
	return got
}
