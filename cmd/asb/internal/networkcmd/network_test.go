package networkcmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/schema"
	"github.com/agents-sandbox/asb/templates"
)

// canary is OPENCODE_API_KEY's value in secrets.env; the fixture has a DNS
// query that carries it.
const canary = "canary-0p3nc0de-k3y"

// fixtureLog is runner.NetLog over testdata/session.jsonl: a VM created
// with --log-level debug whose agent reached opencode.ai and was refused
// npm, GitHub's downloads and a few hosts learn must not propose.
type fixtureLog struct {
	level string
	since time.Time
	vm    string
}

func (l *fixtureLog) LogLevel(_ context.Context, vm string) (string, bool, error) {
	l.vm = vm
	return l.level, true, nil
}

func (l *fixtureLog) SystemLog(_ context.Context, _ string, since time.Time) ([]byte, error) {
	l.since = since
	return os.ReadFile(filepath.Join("testdata", "session.jsonl"))
}

// folder lays down an outer folder as `asb init --agent opencode --secret
// GITHUB_TOKEN@api.github.com --allow '*.example.net'` does, then denies
// evil.example.net (which *.example.net covers) and sets the canary in
// secrets.env.
func folder(t *testing.T) (string, *cmdutil.Factory, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	opts := generator.DefaultOptions("opencode", "proj")
	opts.Secrets = []schema.SecretSpec{{Name: "GITHUB_TOKEN", Hosts: []string{"api.github.com"}}}
	opts.Allow = []string{"*.example.net"}
	plan, err := generator.Render(templates.FS, opts)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "proj")
	if _, err := generator.Apply(context.Background(), dir, plan, generator.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "secrets.env"), []byte("OPENCODE_API_KEY="+canary+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	f := &cmdutil.Factory{
		IO:        &cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
		Templates: templates.FS,
		Getwd:     func() (string, error) { return filepath.Join(dir, "workspace"), nil },
		Getenv:    func(string) string { return "" },
		Now:       func() time.Time { return time.Date(2026, 12, 3, 12, 10, 0, 0, time.UTC) },
	}
	of, err := cmdutil.OpenFolder(f, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := of.Deny([]string{"evil.example.net"}); err != nil {
		t.Fatal(err)
	}
	return dir, f, &out, &errOut
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func wantLines(t *testing.T, what, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, got)
		}
	}
}

// squash makes each run of spaces one space (the table's padding).
func squash(s string) string {
	return regexp.MustCompile(` +`).ReplaceAllString(s, " ")
}

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		target string
		port   int
		code   int
		out    string
	}{
		{"opencode.ai", 0, 0, `Allowed: opencode.ai matches network.allow entry "opencode.ai"` + "\n"},
		{"https://example.net/x", 0, 0, `Allowed: example.net matches network.allow entry "*.example.net" (in msb, *.example.net takes in example.net itself)` + "\n"},
		{"api.example.net", 8080, 0, `Allowed: api.example.net matches network.allow entry "*.example.net"` + "\n"},
		{"evil.example.net", 0, 1, `Denied: evil.example.net matches network.deny entry "evil.example.net" (msb checks the deny entries before the allow entries)` + "\n"},
		{"registry.npmjs.org", 0, 1, "Denied: no allow entry matches registry.npmjs.org (egress is denied but for network.allow)\n"},
	} {
		_, f, out, _ := folder(t)
		err := runCheck(&CheckOptions{Factory: f, Target: c.target, Port: c.port})
		if code := cmdutil.ExitCode(err); code != c.code || out.String() != c.out {
			t.Errorf("check %s: exit %d, %q; want %d, %q", c.target, code, out, c.code, c.out)
		}
	}
}

func TestCheckBadInput(t *testing.T) {
	_, f, out, _ := folder(t)
	err := runCheck(&CheckOptions{Factory: f, Target: "https://exa_mple.com/"})
	if cmdutil.ExitCode(err) != 2 || out.Len() != 0 || !strings.Contains(err.Error(), `network check "https://exa_mple.com/" is not a host name; give a host`) {
		t.Errorf("bad host: %v (exit %d), stdout %q", err, cmdutil.ExitCode(err), out)
	}
	// An entry msb refuses: msb create would fail, so there is no verdict.
	dir, f, out, _ := folder(t)
	sb := filepath.Join(dir, "sandbox.yaml")
	if err := os.WriteFile(sb, []byte(strings.Replace(read(t, sb), `- "opencode.ai"`, `- "opencode.ai:443"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	err = runCheck(&CheckOptions{Factory: f, Target: "opencode.ai"})
	if cmdutil.ExitCode(err) != 2 || out.Len() != 0 || !strings.Contains(err.Error(), `network.allow[0] "opencode.ai:443" 443 is a port, not a protocol`) {
		t.Errorf("an entry msb refuses: %v, stdout %q", err, out)
	}
}

func TestLog(t *testing.T) {
	_, f, out, errOut := folder(t)
	src := &fixtureLog{level: "debug"}
	if err := runLog(context.Background(), &LogOptions{Factory: f, Since: time.Hour, Log: src}); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.HasPrefix(src.vm, "proj-") || !strings.HasSuffix(src.vm, "-opencode") || !src.since.Equal(time.Date(2026, 12, 3, 11, 10, 0, 0, time.UTC)) {
		t.Errorf("read the log of %q since %v", src.vm, src.since)
	}
	wantLines(t, "asb network log", squash(got),
		"Network decisions msb logged for "+src.vm+" since 2026-12-03T11:10:00Z:\n\nDenied:\n HOST COUNT KIND LAST\n",
		" registry.npmjs.org 3 dns 2026-12-03T12:00:09Z\n objects.githubusercontent.com 2 dns, tls 2026-12-03T12:00:03Z\n",
		" 93.184.215.14:80 1 tcp 2026-12-03T12:00:04Z\n",
		" (a name holding a secret's value) 1 dns 2026-12-03T12:00:04Z\n",
		" example.com 1 dns-resolver 2026-12-03T12:00:04Z\n",
		"\nAllowed:\n HOST COUNT KIND LAST\n opencode.ai 2 tls 2026-12-03T12:00:07Z\n",
		"\nasb network learn proposes the refused names for network.allow.\n")
	for _, never := range []string{canary, "old.example.org", "printed.example.org", "DEBUG", "microsandbox_network"} {
		if strings.Contains(strings.ToLower(got+errOut.String()), never) {
			t.Errorf("asb network log printed %q:\n%s", never, got)
		}
	}
	if errOut.Len() != 0 {
		t.Errorf("stderr: %s", errOut)
	}
}

func TestLogJSONAndLevel(t *testing.T) {
	_, f, out, errOut := folder(t)
	if err := runLog(context.Background(), &LogOptions{Factory: f, JSON: true, Log: &fixtureLog{level: ""}}); err != nil {
		t.Fatal(err)
	}
	wantLines(t, "asb network log --json", out.String(), `"log_level": ""`,
		`"host": "old.example.org",`+"\n      \"decision\": \"denied\",\n      \"count\": 1,\n      \"kinds\": [\n        \"dns\"\n      ],\n      \"last\": \"2026-12-03T11:00:05Z\",\n      \"named\": true\n")
	wantLines(t, "stderr", errOut.String(), "runs at msb's log level info (the default), and msb 0.7.2 logs network decisions only at debug",
		"Add --log-level debug to the msb create command of vm:create in Taskfile.yml")
	if strings.Contains(out.String(), canary) {
		t.Error("the JSON holds the canary")
	}
}

func TestParseSince(t *testing.T) {
	for in, want := range map[string]time.Duration{"": 0, "30m": 30 * time.Minute, "1h30m": 90 * time.Minute, "2d": 48 * time.Hour} {
		if got, err := parseSince(in); err != nil || got != want {
			t.Errorf("parseSince(%q) = %v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"soon", "-5m", "0", "1w"} {
		if _, err := parseSince(bad); cmdutil.ExitCode(err) != 2 || !strings.Contains(err.Error(), "is not a duration: give e.g. 30m, 2h or 1d") {
			t.Errorf("parseSince(%q) = %v", bad, err)
		}
	}
}

// learned is sandbox.yaml before learn with the learned hosts appended to
// network.allow: every comment and line of it kept, nothing else changed.
func learned(before string, hosts ...string) string {
	anchor := "    - \"*.example.net\"\n"
	add := ""
	for _, h := range hosts {
		add += "    - \"" + h + "\"\n"
	}
	return strings.Replace(before, anchor, anchor+add, 1)
}

func TestLearnYes(t *testing.T) {
	dir, f, out, _ := folder(t)
	sb := filepath.Join(dir, "sandbox.yaml")
	before := read(t, sb)
	if err := runLearn(context.Background(), &LearnOptions{Factory: f, Since: time.Hour, Yes: true, Log: &fixtureLog{level: "debug"}}); err != nil {
		t.Fatal(err)
	}
	if got, want := read(t, sb), learned(before, "registry.npmjs.org", "objects.githubusercontent.com"); got != want {
		t.Errorf("sandbox.yaml after learn --yes:\n%s\nwant:\n%s", got, want)
	}
	wantLines(t, "asb network learn --yes", out.String(),
		"Hosts msb refused to proj-",
		"  registry.npmjs.org  refused 3 times (DNS lookup)\n  objects.githubusercontent.com  refused 2 times (DNS lookup, TLS connection)\n",
		"Not proposed:\n",
		"  api.github.com: sandbox.yaml allows it now (api.github.com matches network.allow entry \"api.github.com\"); the VM was created before: asb task vm:create\n",
		"  evil.example.net: network.deny entry \"evil.example.net\" denies it on purpose (asb network allow evil.example.net undoes that)\n",
		"  5.0.0.10.in-addr.arpa: it is a private or local name",
		"  metadata.google.internal: it is a private or local name",
		"  git.corp.example.com: msb refused it for another reason than the allow list (dns-rebind",
		"  example.com: msb refused it for another reason than the allow list (dns-resolver",
		"  93.184.215.14:80: msb logged only its address",
		"  1.2.3.4: msb logged only its address",
		"  (a name holding a secret's value): it holds the value of a secret",
		"--yes: allowing registry.npmjs.org, objects.githubusercontent.com\n",
		"added to network.allow: registry.npmjs.org, objects.githubusercontent.com\n",
		"The VM still runs with the allow list it was created with. Create it again for the change: asb task vm:create (the next asb task agent does that too, since sandbox.yaml changed).\n",
	)
	if strings.Contains(out.String(), canary) || strings.Contains(out.String(), "old.example.org") {
		t.Errorf("learn printed the canary or a host from before --since:\n%s", out)
	}
	if probs := schema.CheckDir(dir, schema.CheckOptions{Getenv: f.Getenv}); schema.HasErrors(probs) {
		t.Errorf("asb validate after learn: %v", probs)
	}
}
