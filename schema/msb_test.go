package schema_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/internal/testkit/testenv"
	"github.com/agents-sandbox/asb/schema"
)

// msbAccepts runs `msb create IMAGE --conf FILE --pull never` with a private
// MSB_HOME and reports whether msb got past reading the config. The image
// is never cached, so an accepted config stops at "image not cached".
func msbAccepts(t *testing.T, msb, dir, conf string) (bool, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, msb, "create", "asb-test-none:latest", "--name", "asb-agree", "--conf", conf, "--pull", "never")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MSB_HOME="+testenv.MSBHome(t))
	out, err := cmd.CombinedOutput()
	s := strings.TrimSpace(string(out))
	if err == nil {
		t.Fatalf("msb create succeeded with an image that cannot exist:\n%s", s)
	}
	if strings.Contains(s, "image not cached") {
		return true, s
	}
	return false, s
}

// TestRealMsbAgreesOnSandboxYAML feeds the real msb and LoadSandbox the same
// files and asserts they agree on accept/reject.
//
// Where asb is deliberately stricter than msb, the case is listed in
// stricter instead (and asserted: msb accepts, asb rejects):
//   - ports with host port 0, a leading + or leading zeros (msb takes them);
//   - a top-level YAML list (msb maps it onto the fields positionally);
//   - a short mount with an empty source (":/app");
//   - image given as an object (asb keeps only the string form).
//
// And checks msb never makes (the boundary: mounts of the outer folder or
// $HOME, literal secrets, open networks) are CheckDir's, not compared here.
func TestRealMsbAgreesOnSandboxYAML(t *testing.T) {
	msb := testenv.MSB(t)
	good := map[string]string{
		"generated":         goodSandbox,
		"network string":    "network: public\n",
		"network none":      "network: none\n",
		"short mounts":      "mounts:\n  - \"./src:/app\"\n  - \"./src:/ro:ro,noexec\"\n  - \"vol:/vol\" # asb: allow-volume\n",
		"object mounts":     "mounts:\n  - named: v # asb: allow-volume\n    target: /v\n    create: ensure-exists\n  - tmpfs: {size: 64M}\n    target: /tmp\n  - bind: ./src\n    target: /s\n    nosuid: true\n",
		"ports":             "ports:\n  - \"8080:80\"\n  - \"9000:9000/udp\"\n  - \"127.0.0.1:8081:81/tcp\"\n",
		"memory forms":      "memory: \"1.5G\"\n",
		"memory bare":       "memory: \"4096\"\n",
		"yaml 1.2 ints":     "cpus: 0x2\n",
		"True":              "network: {strict: True}\n",
		"null":              "cpus: ~\nmounts:\n",
		"durations":         "max_duration: 2h\nidle_timeout: 90s\n",
		"document markers":  "---\ncpus: 1\n...\n",
		"str tag":           "memory: !!str 4G\n",
		"policy and allow":  "network:\n  policy: public\n  allow: [a.example.com]\n",
		"cmd list":          "cmd: [sh, -c, 'echo hi']\nentrypoint: [/bin/sh]\n",
		"env and labels":    "env: {A: \"1\"}\nlabels: {team: x}\n",
		"security":          "security: restricted\npull_policy: never\n",
		"secret violations": "secret_violation_action: block-and-log\n",
	}
	bad := map[string]string{
		"unknown key":       goodSandbox + "bogus: 1\n",
		"anchors":           "env: &a {A: b}\nlabels: *a\n",
		"two documents":     "cpus: 1\n---\ncpus: 2\n",
		"bare yes":          "network: {strict: yes}\n",
		"bare on":           "mounts:\n  - bind: ./src\n    target: /a\n    readonly: on\n",
		"memory lots":       "memory: lots\n",
		"memory GiB":        "memory: 4GiB\n",
		"memory K":          "memory: 512K\n",
		"memory number":     "memory: 4096\n",
		"cpus string":       "cpus: \"two\"\n",
		"cpus zero":         "cpus: 0\n",
		"cpus 300":          "cpus: 300\n",
		"cpus float":        "cpus: 2.0\n",
		"bad mount spec":    "mounts:\n  - \"./src\"\n",
		"relative guest":    "mounts:\n  - \"./src:app\"\n",
		"mount option":      "mounts:\n  - \"./src:/app:size=1G\"\n",
		"mount guest root":  "mounts:\n  - \"./src:/\"\n",
		"mount two kinds":   "mounts:\n  - bind: ./src\n    named: v\n    target: /a\n",
		"mount no target":   "mounts:\n  - bind: ./src\n",
		"mount unknown key": "mounts:\n  - bind: ./src\n    target: /a\n    mode: 1\n",
		"mount create bind": "mounts:\n  - bind: ./src\n    target: /a\n    create: ensure-exists\n",
		"bad port":          "ports:\n  - \"80\"\n",
		"port range":        "ports:\n  - \"99999:80\"\n",
		"port protocol":     "ports:\n  - \"8080:80/sctp\"\n",
		"port number":       "ports:\n  - 8080\n",
		"port bind name":    "ports:\n  - \"localhost:8080:80\"\n",
		"network word":      "network: everything\n",
		"network key":       "network: {allowed: [a.com]}\n",
		"single label":      "network: {allow: [localhost]}\n",
		"pull if-missing":   "pull_policy: if-missing\n",
		"duration days":     "max_duration: 1d\n",
		"entrypoint string": "entrypoint: /bin/sh\n",
		"env number":        "env: {A: 1}\n",
		"user number":       "user: 1000\n",
		"duplicate key":     "cpus: 1\ncpus: 2\n",
		"merge key":         "env:\n  <<: {A: b}\n",
		"int tag":           "cpus: !!int 2\n",
		"empty":             "",
		"comment only":      "# nothing\n",
		"scalar":            "hello\n",
		"syntax":            "cpus: [\n",
	}
	stricter := map[string]string{
		"port zero":     "ports:\n  - \"0:80\"\n",
		"port plus":     "ports:\n  - \"+8080:80\"\n",
		"top list":      "- a\n",
		"empty source":  "mounts:\n  - \":/app\"\n",
		"image object":  "image: {oci: x}\n",
		"port leading0": "ports:\n  - \"08080:80\"\n",
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(name, content string) (msbOK bool, msbOut string, asb []schema.Problem) {
		conf := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".yaml")
		if err := os.WriteFile(conf, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		msbOK, msbOut = msbAccepts(t, msb, dir, conf)
		_, _, asb = schema.LoadSandbox("sandbox.yaml", []byte(content))
		return msbOK, msbOut, asb
	}
	for name, content := range good {
		t.Run("good/"+name, func(t *testing.T) {
			msbOK, out, probs := run(name, content)
			if !msbOK {
				t.Errorf("msb rejects it: %s", out)
			}
			if len(probs) > 0 {
				t.Errorf("LoadSandbox rejects it:\n%s", render(probs))
			}
		})
	}
	for name, content := range bad {
		t.Run("bad/"+name, func(t *testing.T) {
			msbOK, out, probs := run(name, content)
			if msbOK {
				t.Errorf("msb accepts it: %s", out)
			}
			if len(probs) == 0 {
				t.Errorf("LoadSandbox accepts it; msb says: %s", out)
			}
			for _, p := range probs {
				if p.Line < 1 {
					t.Errorf("problem without a line: %s", p)
				}
			}
		})
	}
	for name, content := range stricter {
		t.Run("stricter/"+name, func(t *testing.T) {
			msbOK, out, probs := run(name, content)
			if !msbOK {
				t.Errorf("msb now rejects it (%s): move the case to bad", out)
			}
			if len(probs) == 0 {
				t.Error("LoadSandbox accepts it; asb meant to be stricter here")
			}
		})
	}
}

// TestRealMsbAgreesOnSecretsYAML does the same for --secret-conf. msb checks
// an unset variable only after the image, so every case exports FOO.
func TestRealMsbAgreesOnSecretsYAML(t *testing.T) {
	msb := testenv.MSB(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "sandbox.yaml")
	if err := os.WriteFile(conf, []byte("cpus: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, content string
		ok            bool
	}{
		{"good", "FOO:\n  value: \"${FOO}\"\n  allow: [a.example.com]\n  substitution: {headers: true, query: false}\n", true},
		{"wildcard", "FOO:\n  value: \"${FOO}\"\n  allow: [\"*.example.com\"]\n  violation_action: block-and-log\n", true},
		{"no allow", "FOO:\n  value: \"${FOO}\"\n", false},
		{"empty allow", "FOO:\n  value: \"${FOO}\"\n  allow: []\n", false},
		{"bare yes", "FOO:\n  value: \"${FOO}\"\n  allow: [a.example.com]\n  substitution: {headers: yes}\n", false},
		{"header_fields", "FOO:\n  value: \"${FOO}\"\n  allow: [a.example.com]\n  header_fields: [x]\n", false},
		{"bad variable", "FOO:\n  value: \"${1BAD}\"\n  allow: [a.example.com]\n", false},
		{"passthrough bool", "FOO:\n  value: \"${FOO}\"\n  allow: [a.example.com]\n  passthrough: true\n", false},
		{"bad action", "FOO:\n  value: \"${FOO}\"\n  allow: [a.example.com]\n  violation_action: bogus\n", false},
		{"anchors", "FOO: &a\n  value: \"${FOO}\"\n  allow: [a.example.com]\nBAR: *a\n", false},
		{"list", "- FOO\n", false},
		{"empty", "", false},
		// msb accepts these; asb's CheckDir reports them (literal value,
		// URL as a host), so LoadSecrets alone agrees with msb here.
		{"literal value (CheckDir error)", "FOO:\n  value: \"hunter2\"\n  allow: [a.example.com]\n", true},
		{"url host (CheckDir error)", "FOO:\n  value: \"${FOO}\"\n  allow: [\"http://a.example.com/x\"]\n", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sec := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".yaml")
			if err := os.WriteFile(sec, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, msb, "create", "asb-test-none:latest", "--name", "asb-agree", "--conf", conf,
				"--secret-conf", sec, "--pull", "never")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "MSB_HOME="+testenv.MSBHome(t), "FOO=x")
			out, _ := cmd.CombinedOutput()
			msbOK := strings.Contains(string(out), "image not cached")
			if msbOK != tc.ok {
				t.Fatalf("msb accept = %v, want %v: %s", msbOK, tc.ok, out)
			}
			_, _, probs := schema.LoadSecrets("secrets.yaml", []byte(tc.content))
			// "no allow" is a CheckDir error, not a loader one.
			if tc.name == "no allow" || tc.name == "empty allow" {
				d := folder(t, map[string]string{"secrets.yaml": tc.content})
				probs = schema.CheckDir(d, schema.CheckOptions{Getenv: envWith("FOO", "OPENCODE_API_KEY"), Tracked: noGit})
			}
			if asbOK := !schema.HasErrors(probs); asbOK != tc.ok {
				t.Errorf("asb accept = %v, msb accept = %v; asb says:\n%s", asbOK, msbOK, render(probs))
			}
		})
	}
}
