package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// real-0.7.2-allow.jsonl is what msb 0.7.2 logged of a real VM's network
// (`msb logs VM --source system --json --grep microsandbox_network::`),
// captured by the real-boot network test (e2e/net_real_test.go) in the
// nested guest: a VM of `asb init --network allow` (opencode.ai and
// api.github.com allowed) that looked up registry.npmjs.org and
// denied.example.com (refused by the policy) and the two allowed names,
// whose answers were in 203.0.113.0/24, which msb's rebind protection
// refused. A refused lookup is logged for its A and its AAAA query.
func TestParseNetLogReal(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "msblog", "real-0.7.2-allow.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	events, err := ParseNetLog(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	ts := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339Nano, "2026-12-04T18:"+s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	want := []NetEvent{
		{ts("56:47.398Z"), false, "dns-rebind", "opencode.ai", ""},
		{ts("56:50.950Z"), false, "dns-rebind", "api.github.com", ""},
		{ts("56:51.840Z"), false, "dns", "registry.npmjs.org", ""},
		{ts("56:51.841Z"), false, "dns", "registry.npmjs.org", ""},
		{ts("56:52.390Z"), false, "dns", "denied.example.com", ""},
		{ts("56:52.390Z"), false, "dns", "denied.example.com", ""},
		{ts("57:54.614Z"), false, "dns-rebind", "api.github.com", ""},
		{ts("57:57.243Z"), false, "dns-rebind", "opencode.ai", ""},
		{ts("57:57.625Z"), false, "dns", "denied.example.com", ""},
		{ts("57:57.711Z"), false, "dns", "denied.example.com", ""},
		{ts("57:58.119Z"), false, "dns", "registry.npmjs.org", ""},
		{ts("57:58.338Z"), false, "dns", "registry.npmjs.org", ""},
	}
	if d := cmp.Diff(want, events); d != "" {
		t.Errorf("ParseNetLog of msb 0.7.2's real lines (-want +got):\n%s", d)
	}
}

// real-0.7.2-public.jsonl: the same session's VM of --network public:
// intercepted TLS to each name, HTTPS to a bare address dropped for want
// of an SNI (no decision line), and GITHUB_TOKEN's placeholder sent to
// three hosts not in its allow list, each blocked as a secret violation.
func TestParseNetLogRealPublic(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "msblog", "real-0.7.2-public.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	events, err := ParseNetLog(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range events {
		got = append(got, fmt.Sprintf("%v %s %s %s", e.Allowed, e.Kind, e.Host, e.Dst))
	}
	want := []string{
		"true tls opencode.ai 11.77.0.10:443",
		"true tls api.github.com 11.77.0.11:443",
		"true tls registry.npmjs.org 11.77.0.12:443",
		"true tls denied.example.com 11.77.0.13:443",
		"true tls api.github.com 11.77.0.11:443",
		"true tls opencode.ai 11.77.0.10:443",
		"true tls opencode.ai 11.77.0.10:443",
		"false secret opencode.ai 11.77.0.10:443",
		"true tls denied.example.com 11.77.0.13:443",
		"false secret denied.example.com 11.77.0.13:443",
		"true tls registry.npmjs.org 11.77.0.12:443",
		"false secret registry.npmjs.org 11.77.0.12:443",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ParseNetLog of msb 0.7.2's real lines (-want +got):\n%s", d)
	}
}
