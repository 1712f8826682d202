package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/internal/testkit/testenv"
	"github.com/agents-sandbox/asb/schema"
)

// diffSeed and diffPairs fix the corpus: the same files on every run.
const (
	diffSeed  = 22
	diffPairs = 20
)

// stricterOnPurpose are the only disagreements allowed: files msb 0.7.2
// accepts and asb validate refuses, each on purpose and said so in the
// message. A file msb refuses and asb accepts is never allowed.
var stricterOnPurpose = []struct{ says, why string }{
	{"not supported by asb", "the key table (schema/keys.go) or a rule refuses it, with its reason"},
	{"widens the boundary", "a boundary-widening key without its consent comment (# asb: allow-…)"},
	{"is outside the outer folder", "mounts default-deny on the host side: a bind outside the folder needs consent"},
	{"is a system folder of the host", "README-listed host folders stay refused, even with consent"},
	{"is the outer folder itself", "an empty bind is the config's folder: the VM would see secrets.env"},
	{"too little for the agent", "memory below 256M"},
	{"is not a domain name", "asb allows letters, digits and dashes in a host's labels (msb also takes _ and *)"},
	{"nothing is mounted at /workspace", "asb's outer folder always mounts workspace/"},
	{"mounts the host folder", "the same host folder mounted twice"},
	{"is an IP address", "asb allows domains; msb's allow also takes IPs and CIDRs"},
	{"would cover /workspace", "a mount over what asb mounts itself"},
	{"is not a valid value", "asb reads the spellings of secret_violation_action its docs give"},
	{`host port "0"`, "a host port 0 forwards no port anyone can name"},
}

// TestRealMsbDifferential generates sandbox.yaml files, judges each with
// the real msb's parser (msb create --pull never of an image that is not
// cached: msb reads the config, then stops at the image) and with asb's
// validate (schema.CheckDir), and fails on every disagreement but those in
// stricterOnPurpose.
//
// msb checks some things only when the VM boots (a bind's host folder
// exists and is a folder, a named volume exists, a secret's variable is
// set): CheckDir's own checks and the boot tests (TestRealMSBCreate*)
// cover those.
func TestRealMsbDifferential(t *testing.T) {
	msb := testenv.MSB(t)
	dir := t.TempDir()
	for _, d := range []string{"workspace", "opencode", "src"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cases := diffCorpus(diffSeed, diffPairs)
	if len(cases) < 200 {
		t.Fatalf("the corpus has %d files, want at least 200", len(cases))
	}
	type verdict struct {
		msbOK  bool
		msbOut string
		asb    []schema.Problem
	}
	got := make([]verdict, len(cases))
	parallel(len(cases), func(i int) {
		conf := filepath.Join(dir, cases[i].name+".yaml")
		if err := os.WriteFile(conf, []byte(cases[i].yaml), 0o644); err != nil {
			t.Error(err)
			return
		}
		ok, out := msbParses(t, msb, dir, conf)
		probs := schema.CheckDir(dir, schema.CheckOptions{
			Overrides: map[string][]byte{schema.SandboxFile: []byte(cases[i].yaml)},
			Tracked:   func(string) (bool, error) { return false, nil },
		})
		got[i] = verdict{ok, out, sandboxErrors(probs)}
	})

	accepted, stricter, disagree := 0, 0, 0
	for i, c := range cases {
		v := got[i]
		asbOK := len(v.asb) == 0
		switch {
		case v.msbOK && asbOK:
			accepted++
		case !v.msbOK && !asbOK:
		case v.msbOK && onPurpose(v.asb):
			stricter++
		default:
			disagree++
			t.Errorf("%s: msb accepts = %v, asb accepts = %v\n--- sandbox.yaml\n%s--- msb: %s\n--- asb:\n%s",
				c.name, v.msbOK, asbOK, c.yaml, v.msbOut, render(v.asb))
		}
	}
	t.Logf("%d files: %d accepted by both, %d refused by both, %d refused by asb on purpose, %d disagreements",
		len(cases), accepted, len(cases)-accepted-stricter-disagree, stricter, disagree)
}

// parallel calls fn(0) … fn(n-1), two at a time: this machine's cores are
// shared, and each msb run is short.
func parallel(n int, fn func(i int)) {
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for i := range jobs {
				fn(i)
			}
		})
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
}

// msbParses runs msb create on conf with a private MSB_HOME; true when msb
// got past the config to the image.
func msbParses(t *testing.T, msb, dir, conf string) (bool, string) {
	home, err := os.MkdirTemp("", "msb-diff-")
	if err != nil {
		t.Error(err)
		return false, ""
	}
	defer os.RemoveAll(home)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, msb, "create", "asb-test-none:latest", "--name", "asb-diff", "--conf", conf, "--pull", "never")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MSB_HOME="+home)
	out, _ := cmd.CombinedOutput()
	s := strings.TrimSpace(string(out))
	return strings.Contains(s, "image not cached"), s
}

// sandboxErrors are CheckDir's errors about sandbox.yaml (the corpus
// changes only that file).
func sandboxErrors(ps []schema.Problem) []schema.Problem {
	var out []schema.Problem
	for _, p := range ps {
		if p.File == schema.SandboxFile && p.Severity == schema.SeverityError {
			out = append(out, p)
		}
	}
	return out
}

// onPurpose reports whether every error is one asb makes on purpose.
func onPurpose(ps []schema.Problem) bool {
	for _, p := range ps {
		ok := false
		for _, s := range stricterOnPurpose {
			ok = ok || strings.Contains(p.Msg, s.says)
		}
		if !ok {
			return false
		}
	}
	return true
}

func render(ps []schema.Problem) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString("  " + p.String() + "\n")
	}
	return b.String()
}
