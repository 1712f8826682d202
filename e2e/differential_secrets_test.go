package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/internal/testkit/testenv"
	"github.com/agents-sandbox/asb/schema"
)

// secretsOnPurpose are the secrets.yaml files msb accepts and asb refuses
// on purpose (besides stricterOnPurpose's "not supported by asb").
var secretsOnPurpose = []struct{ says, why string }{
	{"is a literal", "msb would store the credential in plain text, in a committed file"},
	{"has no value", "a binding without a value sends nothing"},
	{"has lower-case letters", "secret names are upper case (schema.SecretName)"},
	{"starts with MSB_", "msb's own placeholders are MSB_<NAME>"},
	{"whole top-level domain", "asb's host rule (schema.Host) for every door"},
	{"is an IP address", "asb's host rule: domains only"},
	{"is not a domain name", "asb's host rule: domains only"},
}

// secretsForms are the bindings of FOO the secrets corpus tries.
var secretsForms = []string{
	`{value: "${FOO}", allow: [a.example.com]}`, `{value: "${BAR}", allow: [a.example.com]}`,
	`{value: "x${FOO}", allow: [a.example.com]}`, `{value: "${FOO:-x}", allow: [a.example.com]}`,
	`{value: "literal", allow: [a.example.com]}`, `{value: "", allow: [a.example.com]}`, `{allow: [a.example.com]}`,
	`{value: "${FOO}", allow: []}`, `{value: "${FOO}"}`, `{value: "${FOO}", allow: ["*.com"]}`,
	`{value: "${FOO}", allow: ["*.co.uk"]}`, `{value: "${FOO}", allow: [localhost]}`, `{value: "${FOO}", allow: ["1.2.3.4"]}`,
	`{value: "${FOO}", allow: ["Example.COM."]}`, `{value: "${FOO}", allow: ["${FOO}.example.com"]}`,
	`{value: "${FOO}", allow: [a.example.com], placeholder: ""}`, `{value: "${FOO}", allow: [a.example.com], placeholder: "$FOO_P"}`,
	`{value: "${FOO}", allow: [a.example.com], substitution: {headers: false}}`,
	`{value: "${FOO}", allow: [a.example.com], substitution: {headers: false, body: true}}`,
	`{value: "${FOO}", allow: [a.example.com], substitution: {headers: yes}}`,
	`{value: "${FOO}", allow: [a.example.com], passthrough: [b.example.com]}`, `{value: "${FOO}", allow: [a.example.com], passthrough: true}`,
	`{value: "${FOO}", allow: [a.example.com], violation_action: block-and-log}`, `{value: "${FOO}", allow: [a.example.com], violation_action: bogus}`,
	`{value: "${FOO}", allow: [a.example.com], require_tls_identity: false}`, `{value: "${FOO}", allow: [a.example.com], header_fields: [x]}`,
	`{value: "${FOO}", allow: [a.example.com], bogus: 1}`, `"${FOO}"`,
}

// TestRealMsbDifferentialSecrets does for secrets.yaml what
// TestRealMsbDifferential does for sandbox.yaml: each binding form under
// the names FOO, foo and MSB_FOO, judged by msb (every variable it names is
// set) and by asb validate.
func TestRealMsbDifferentialSecrets(t *testing.T) {
	msb := testenv.MSB(t)
	dir := t.TempDir()
	for _, d := range []string{"workspace", "opencode"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	conf := filepath.Join(dir, "sandbox.yaml")
	sandbox := "mounts:\n  - bind: ./workspace\n    target: /workspace\nnetwork:\n  allow: [a.example.com]\n"
	if err := os.WriteFile(conf, []byte(sandbox), 0o644); err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, name := range []string{"FOO", "foo", "MSB_FOO"} {
		for _, form := range secretsForms {
			files = append(files, name+": "+strings.ReplaceAll(form, "${FOO}", "${"+name+"}")+"\n")
		}
	}
	type verdict struct {
		msbOK bool
		out   string
		errs  []schema.Problem
	}
	got := make([]verdict, len(files))
	parallel(len(files), func(i int) {
		sec := filepath.Join(dir, fmt.Sprintf("secrets-%03d.yaml", i))
		if err := os.WriteFile(sec, []byte(files[i]), 0o644); err != nil {
			t.Error(err)
			return
		}
		msbOK, out := msbParsesSecrets(t, msb, dir, conf, sec)
		probs := schema.CheckDir(dir, schema.CheckOptions{
			Overrides: map[string][]byte{schema.SecretsFile: []byte(files[i])},
			Tracked:   func(string) (bool, error) { return false, nil },
			Getenv:    func(string) string { return "set" },
		})
		var errs []schema.Problem
		for _, p := range probs {
			if p.File == schema.SecretsFile && p.Severity == schema.SeverityError {
				errs = append(errs, p)
			}
		}
		got[i] = verdict{msbOK, out, errs}
	})
	n, disagree := len(files), 0
	for i, v := range got {
		asbOK := len(v.errs) == 0
		if v.msbOK == asbOK || (v.msbOK && secretsStricter(v.errs)) {
			continue
		}
		disagree++
		t.Errorf("msb accepts = %v, asb accepts = %v\n--- secrets.yaml\n%s--- msb: %s\n--- asb:\n%s", v.msbOK, asbOK, files[i], v.out, render(v.errs))
	}
	t.Logf("%d secrets.yaml files, %d disagreements", n, disagree)
}

// secretsStricter reports whether every error is one of secretsOnPurpose
// or stricterOnPurpose.
func secretsStricter(ps []schema.Problem) bool {
	for _, p := range ps {
		ok := onPurpose([]schema.Problem{p})
		for _, s := range secretsOnPurpose {
			ok = ok || strings.Contains(p.Msg, s.says)
		}
		if !ok {
			return false
		}
	}
	return true
}

func msbParsesSecrets(t *testing.T, msb, dir, conf, sec string) (bool, string) {
	home, err := os.MkdirTemp("", "msb-diff-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(home)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, msb, "create", "asb-test-none:latest", "--name", "asb-diff", "--conf", conf,
		"--secret-conf", sec, "--pull", "never")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MSB_HOME="+home, "FOO=x", "BAR=x", "foo=x", "MSB_FOO=x")
	out, _ := cmd.CombinedOutput()
	s := strings.TrimSpace(string(out))
	return strings.Contains(s, "image not cached"), s
}
