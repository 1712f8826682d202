package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestFirstRunTranscript writes docs/first-run.md from what a newcomer's
// first run does (issue 38): the asb commands of the Makefile's demo
// target, as make demo runs them, then cd demo, the key in secrets.env and
// the first asb task agent, each with its output, run with the stand-in
// msb, docker and podman on a host that can boot. The page is compared
// with the committed one; -update rewrites it. Lines that depend on the
// machine (paths, the hashes and times in names, this machine's extra CA
// certificates, podman's isolation) are normalized; asb doctor's lines are
// the machine's own, so its line says so instead.
func TestFirstRunTranscript(t *testing.T) {
	var lines []string
	for _, s := range demoSteps(t) {
		lines = append(lines, "show "+s)
	}
	// Then the user: the key, the first agent, the second.
	lines = append(lines, "you cd demo", "you '$EDITOR' secrets.env", "you asb task agent", "you asb task agent")
	dir := t.TempDir()
	// podman, as on most laptops (docker is picked where its daemon answers).
	script := docPreamble + "env ASB_BUILDER=podman\nmkdir $WORK/you\ncd $WORK/you\n" + strings.Join(lines, "\n") + "\n" + docEditor
	if err := os.WriteFile(filepath.Join(dir, "first-run.txtar"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	var got transcript
	p := Params(dir)
	p.Cmds["show"] = got.show
	p.Cmds["you"] = func(ts *testscript.TestScript, neg bool, args []string) {
		got.user = true
		got.show(ts, neg, args)
	}
	// The script runs as a parallel subtest: the group waits for it.
	t.Run("run", func(t *testing.T) { testscript.Run(t, p) })
	if t.Failed() {
		return
	}
	page := firstRunPage(got.demo.String(), got.then.String())
	path := filepath.Join("..", "..", "docs", "first-run.md")
	if *update {
		if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil || string(want) != page {
		t.Fatalf("docs/first-run.md is not what a first run prints now: go test ./cmd/asb -run TestFirstRunTranscript -update rewrites it")
	}
}

// demoSteps are the asb commands of the Makefile's demo target, as a user
// would type them (cd demo first for those run in the folder).
func demoSteps(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	recipe := regexp.MustCompile(`(?ms)^demo:[^\n]*\n((?:\t[^\n]*\n)+)`).FindStringSubmatch(string(raw))
	if recipe == nil {
		t.Fatal("the Makefile has no demo target")
	}
	var out []string
	in := false
	for l := range strings.SplitSeq(recipe[1], "\n") {
		l = strings.TrimSpace(l)
		i := strings.Index(l, "$(ASB) ")
		if i < 0 || strings.HasPrefix(l, "@") {
			continue
		}
		cmd := "asb " + strings.TrimSuffix(strings.TrimSpace(l[i+len("$(ASB) "):]), "|| true")
		cmd = strings.TrimSpace(strings.ReplaceAll(cmd, `"$(DEMO_DIR)"`, "demo"))
		if strings.HasPrefix(l, `cd "$(DEMO_DIR)"`) != in {
			in = !in
			out = append(out, map[bool]string{true: "cd demo", false: "cd .."}[in])
		}
		out = append(out, cmd)
	}
	if len(out) < 4 {
		t.Fatalf("the demo target runs %d asb commands: %q", len(out), out)
	}
	return out
}

// transcript collects each command and its output: make demo's, then the
// user's own.
type transcript struct {
	demo, then strings.Builder
	user       bool // past make demo's commands
}

// show runs a command line with sh, its standard error into its output as
// a terminal interleaves them, and writes both down. A command may fail
// (make demo runs asb doctor with || true); its exit status is written.
func (tr *transcript) show(ts *testscript.TestScript, neg bool, args []string) {
	line := strings.Join(args, " ")
	w := &tr.demo
	if tr.user {
		w = &tr.then
	}
	if line == "asb doctor" {
		// Its lines are this machine's own (msb, KVM, the builder, disk),
		// which no stand-in tells truly.
		fmt.Fprintf(w, "$ asb doctor        # what this machine can run: its lines are your machine's (docs/doctor.md)\n")
		return
	}
	if args[0] == "cd" {
		ts.Chdir(args[1])
		fmt.Fprintf(w, "$ %s\n", line)
		return
	}
	err := ts.Exec("sh", "-c", line+" 2>&1")
	out := ts.ReadFile("stdout")
	if line == "$EDITOR secrets.env" {
		line += "      # uncomment OPENCODE_API_KEY= and put your key there"
	}
	fmt.Fprintf(w, "$ %s\n%s", line, normalize(ts, out))
	if err != nil {
		fmt.Fprintf(w, "(exit status %s)\n", strings.TrimPrefix(err.Error(), "exit status "))
	}
}

var normalizers = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`(?m)^asb: the image trusts this machine's CA .*\n`), ""},
	{regexp.MustCompile(`\bdemo-[0-9a-f]{8}\b`), "demo-5e1d77c2"},
	{regexp.MustCompile(`/tmp/testscript-main[0-9]+/bin/`), "~/go/bin/"},
	{regexp.MustCompile(`[^\s'"()$]*/asb-script-bin-[0-9]+/`), "~/go/bin/"}, // testenv.ScriptTools
	// Where crun cannot run RUN steps (hybrid cgroups), podman builds with
	// chroot isolation: a fact of the machine.
	{regexp.MustCompile(` --isolation chroot`), ""},
	// The image's digest: the build context holds this machine's CAs.
	{regexp.MustCompile(`Successfully built [0-9a-f]+`), "Successfully built 25ebc3139942"},
	// The stand-in msb's exec says what it would run in the VM.
	{regexp.MustCompile(`(?m)^fake-exec\[[^\]]*\]: opencode\n`), "(OpenCode starts here, in the VM, on your terminal)\n"},
	{regexp.MustCompile(`(?m)^fake-exec\[[^\]]*\]: sh -c .*\n`), ""},
	{regexp.MustCompile(`-[0-9]{8}-[0-9]{6}\b`), "-20261203-120000"},
}

// normalize makes out the same on every machine: the test's folders become
// your home's, and what varies by machine or time is fixed.
func normalize(ts *testscript.TestScript, out string) string {
	work := ts.Getenv("WORK")
	out = strings.ReplaceAll(out, work+"/you", "~")
	out = strings.ReplaceAll(out, work+"/fakebin", "/usr/local/bin")
	out = strings.ReplaceAll(out, work+"/home", "~")
	out = strings.ReplaceAll(out, work, "/tmp")
	for _, n := range normalizers {
		out = n.re.ReplaceAllString(out, n.with)
	}
	return out
}

// firstRunPage is docs/first-run.md.
func firstRunPage(demo, then string) string {
	return `# A first run, command by command

What a newcomer sees, from ` + "`make demo`" + ` to a first ` + "`asb task agent`" + `. This page is
written by a test (` + "`TestFirstRunTranscript`" + ` in ` + "`cmd/asb`" + `; ` + "`go test ./cmd/asb -run TestFirstRunTranscript\n-update`" + ` rewrites it), which runs these commands with stand-ins for msb, docker and podman
on a host that can boot, so it stays what asb prints. What depends on the machine (paths, the
hashes and times in names, this machine's extra CA certificates and podman's isolation) is
normalized. With the
real msb, the first ` + "`asb task agent`" + ` also builds the image (about 30 s) and boots the VM, and the
agent's own screen follows.

## make demo

` + "`make demo`" + ` installs ` + "`asb`" + ` and ` + "`asb-task`" + `, the real tools (` + "`make tools`" + `: msb, podman, docker,
busybox, mmdebstrap), then lays down an outer folder for OpenCode in ` + "`./demo`" + ` and shows it. These
are the asb commands it runs, as you would type them:

` + "```console\n" + demo + "```" + `

Its last lines say where asb and msb are, and the ` + "`export PATH=…`" + ` line to run when that folder is
not on your PATH.

## Your first agent

` + "```console\n" + then + "```" + `

The second ` + "`asb task agent`" + ` only checks that nothing changed, starts what is stopped, and attaches.
Next: [the README's map](../README.md#documentation) of the rest.
`
}
