package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The fixture is msb 0.7.2's `msb logs VM --source system --json`: real
// lines of a --log-level debug sandbox (runtime, sqlx, the network engine's
// start-up), and decision lines in the format those real lines have, with
// the messages and fields of msb's network engine (see docs/network.md).
func readFixture(t *testing.T) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "msblog", "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func at(t *testing.T, s string) time.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339Nano, "2026-12-03T12:00:"+s)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

func TestParseNetLog(t *testing.T) {
	events, err := ParseNetLog(strings.NewReader(string(readFixture(t))))
	if err != nil {
		t.Fatal(err)
	}
	want := []NetEvent{
		{at(t, "01.100Z"), true, "tls", "opencode.ai", "104.18.6.192:443"},
		{at(t, "02.200Z"), false, "dns", "registry.npmjs.org", ""},
		{at(t, "03.300Z"), false, "dns", "objects.githubusercontent.com", ""},
		{at(t, "04.400Z"), false, "tls", "objects.githubusercontent.com", "185.199.108.133:443"},
		{at(t, "05.500Z"), false, "tcp", "", "93.184.215.14:80"},
		{at(t, "06.600Z"), false, "dns-rebind", "git.corp.example.com", ""},
		{at(t, "07.700Z"), false, "dns-resolver", "example.com", "8.8.8.8"},
		{at(t, "08.800Z"), false, "icmp", "", "1.2.3.4"},
		{at(t, "09.900Z"), false, "tcp-strict", "opencode.ai", "104.18.6.192:443"},
		{at(t, "10.000Z"), false, "tls-mismatch", "evil.example", "10.0.0.1:3128"},
		{at(t, "10.100Z"), true, "tls-bypass", "bypass.example.org", "203.0.113.7:443"},
		{at(t, "10.200Z"), false, "tls-strict", "strict.example.org", "203.0.113.8:443"},
		{at(t, "10.300Z"), false, "dot", "", "1.1.1.1:853"},
		{at(t, "10.400Z"), true, "icmp", "", "9.9.9.9"},
		{at(t, "10.500Z"), false, "dns", "pypi.org", ""},
		{at(t, "11.100Z"), false, "dns", "registry.npmjs.org", ""},
	}
	if d := cmp.Diff(want, events); d != "" {
		t.Errorf("ParseNetLog (-want +got):\n%s", d)
	}
}

func TestLogFields(t *testing.T) {
	f, ok := logFields(` sni="a \"b\"" dst=1.2.3.4:443 original_dst=Some(8.8.8.8) error=None x="Some"`)
	want := map[string]string{"sni": `a "b"`, "dst": "1.2.3.4:443", "original_dst": "8.8.8.8", "x": "Some"}
	if !ok || !cmp.Equal(f, want) {
		t.Errorf("logFields = %v, %v; want %v", f, ok, want)
	}
	if _, ok := logFields(" handshake failed error=x"); ok {
		t.Error("free text read as fields")
	}
}

// fakeNetLog is NetLog over a fixture: the level msb records and the lines.
type fakeNetLog struct {
	level string
	found bool
	raw   []byte
	since time.Time
}

func (f *fakeNetLog) LogLevel(context.Context, string) (string, bool, error) {
	return f.level, f.found, nil
}

func (f *fakeNetLog) SystemLog(_ context.Context, _ string, since time.Time) ([]byte, error) {
	f.since = since
	return f.raw, nil
}

func TestReadNetLog(t *testing.T) {
	src := &fakeNetLog{level: "debug", found: true, raw: readFixture(t)}
	since := at(t, "10.000Z")
	r, err := ReadNetLog(context.Background(), src, "vm", since)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Debug() || !src.since.Equal(since) || len(r.Events) != 7 || r.Events[0].Kind != "tls-mismatch" {
		t.Errorf("ReadNetLog since %v: debug %v, asked since %v, %d events %+v", since, r.Debug(), src.since, len(r.Events), r.Events)
	}
	_, err = ReadNetLog(context.Background(), &fakeNetLog{}, "proj-opencode", time.Time{})
	var nv *NoVMError
	if !errors.As(err, &nv) || !strings.Contains(err.Error(), "msb has no VM proj-opencode: asb task vm:create") {
		t.Errorf("no VM: %v", err)
	}
}
