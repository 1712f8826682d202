package e2e

import (
	"strings"
	"testing"

	"github.com/agents-sandbox/asb/internal/testkit/netlab"
	"github.com/agents-sandbox/asb/internal/testkit/testenv"
)

// netRequests is what the lab's servers received, in order.
func netRequests(t *testing.T, s *testenv.Session) []netlab.Request {
	t.Helper()
	reqs, err := netlab.ReadRequests([]byte(ok(t, s, "requests")))
	if err != nil {
		t.Fatal(err)
	}
	return reqs
}

// netRequest is the request for path at host, if one arrived.
func netRequest(reqs []netlab.Request, host, path string) (netlab.Request, bool) {
	for _, r := range reqs {
		if r.Host == host && r.Path == path {
			return r, true
		}
	}
	return netlab.Request{}, false
}

// TestRealNetSecretSubstitution: the VM holds the placeholders; a request
// to a secret's host arrives with the real value in the header that
// carried the placeholder; no other host ever receives a value (the
// placeholder arrives unchanged, or the request is blocked); and no value
// is in the VM's files, environment or processes, nor in msb's files on
// the host (its logs, its state).
func TestRealNetSecretSubstitution(t *testing.T) {
	s := netRun(t)
	env := ok(t, s, "allow_env")
	for _, v := range []string{"GITHUB_TOKEN=", "OPENCODE_API_KEY="} {
		if !strings.Contains(env, v) {
			t.Errorf("the VM's environment has no %s…:\n%s", v, env)
		}
	}
	reqs := netRequests(t, s)
	if r, found := netRequest(reqs, "api.github.com", "/secret/allow"); !found {
		t.Errorf("no request reached api.github.com/secret/allow; asb network log:%s", netLogLines(s, "allow", "api.github.com"))
	} else if got := r.Header["Authorization"]; len(got) != 1 || got[0] != "Bearer "+netSecretGH {
		t.Errorf("api.github.com received Authorization %q, want the real value of GITHUB_TOKEN", got)
	}
	if r, found := netRequest(reqs, "opencode.ai", "/secret/allow"); !found {
		t.Errorf("no request reached opencode.ai/secret/allow")
	} else if got := r.Header["X-Api-Key"]; len(got) != 1 || got[0] != "Bearer "+netSecretOC {
		t.Errorf("opencode.ai received X-Api-Key %q, want the real value of OPENCODE_API_KEY", got)
	}
	// Every value arrives at its own host only; elsewhere the placeholder.
	own := map[string]string{netSecretGH: "api.github.com", netSecretOC: "opencode.ai"}
	for _, r := range reqs {
		for k, vs := range r.Header {
			for _, v := range vs {
				for value, host := range own {
					if strings.Contains(v, value) && r.Host != host {
						t.Errorf("%s%s received a secret's value in %s (its host is %s)", r.Host, r.Path, k, host)
					}
				}
			}
		}
	}
	// The placeholder sent elsewhere: blocked by msb (the secrets'
	// violation action is block-and-log), or arrived unchanged.
	for _, p := range netPresets {
		for _, host := range []string{"opencode.ai", "denied.example.com", "registry.npmjs.org"} {
			if r, found := netRequest(reqs, host, "/other/"+p); found {
				t.Logf("--network %s: GITHUB_TOKEN's placeholder sent to %s arrived as %q", p, host, r.Header["Authorization"])
			} else if st, ok := s.Steps[p+"_secret_other"]; ok {
				t.Logf("--network %s: GITHUB_TOKEN's placeholder sent to %s did not arrive (%s)", p, host, netOutcome(st.Out, host))
			}
		}
	}
	netNoValue(t, s)
}

// TestRealNetSecretRotation: after a change of a value in secrets.env, a
// task that attaches to the running VM (vm:exec; agent and vm:shell make
// the same check) restarts the VM first and says so, and the VM's next
// request to the secret's host carries the new value, not the one it
// started with (which /secret/allow carried before the change).
func TestRealNetSecretRotation(t *testing.T) {
	s := netRun(t)
	st := s.Step(t, "allow_rotate")
	if !strings.Contains(st.Out+st.Err, "the secrets changed since") {
		t.Errorf("asb task vm:exec after the change did not say it restarts the VM: %s", st.Why())
	}
	r, found := netRequest(netRequests(t, s), "opencode.ai", "/secret/rotated")
	if !found {
		t.Fatalf("after the change no request reached opencode.ai/secret/rotated: %s\nasb network log:%s",
			st.Why(), netLogLines(s, "allow", "opencode.ai"))
	}
	got := strings.Join(r.Header["X-Api-Key"], ",")
	if got != "Bearer "+netSecretOCNew {
		t.Errorf("after the change opencode.ai received X-Api-Key %q, want the new value",
			strings.NewReplacer(netSecretOC, "<the value the VM started with>", netSecretOCNew, "<the new value>").Replace(got))
	}
}

// netOutcome is the probe's line for host in out.
func netOutcome(out, host string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "//"+host+"/") {
			return strings.TrimSpace(l)
		}
	}
	return "not probed"
}

// netNoValue: no secret value in the VM (files, environment, processes)
// nor in msb's files on the host.
func netNoValue(t *testing.T, s *testenv.Session) {
	t.Helper()
	if out := strings.TrimSpace(ok(t, s, "vm_fs")); out != "" {
		t.Errorf("files in the VM holding a secret's value:\n%s", out)
	}
	for _, step := range []string{"vm_proc", "allow_env", "balanced_env", "public_env", "none_env"} {
		out := ok(t, s, step)
		for _, v := range []string{netSecretOC, netSecretGH, netSecretOCNew} {
			if strings.Contains(out, v) {
				t.Errorf("%s: a secret's value is in the VM's processes or environment", step)
			}
		}
	}
	if out := strings.TrimSpace(ok(t, s, "host_logs")); out != "" {
		t.Errorf("msb's files on the host (MSB_HOME, TMPDIR) holding a secret's value:\n%s", out)
	}
	for _, p := range netPresets {
		for _, v := range []string{netSecretOC, netSecretGH, netSecretOCNew} {
			if strings.Contains(s.Steps[p+"_msblog"].Out, v) || strings.Contains(s.Steps[p+"_log"].Out, v) {
				t.Errorf("--network %s: a secret's value in msb logs or asb network log", p)
			}
		}
	}
}
