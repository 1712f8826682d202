package main

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/agents-sandbox/asb/internal/testkit/fakes"
	"github.com/agents-sandbox/asb/internal/testkit/testenv"
)

// TestMain keeps this binary's approvals in a folder of its own (a
// script's asb has the script's HOME). The scripts run the small programs
// of testenv.ScriptTools, never this binary under another name.
func TestMain(m *testing.M) {
	testscript.Main(removingScriptTools{m, testenv.PrivateState()}, nil)
}

// TestScripts runs testdata/script/*.txtar. Every script gets Setup's
// environment and ScriptCmds' commands.
func TestScripts(t *testing.T) {
	testenv.Slow(t)
	testscript.Run(t, Params("testdata/script"))
}

// Params are the testscript parameters every asb script runs with; another
// test (e.g. one that needs the real msb) can reuse them on its own folder.
func Params(dir string) testscript.Params {
	return testscript.Params{
		Dir:                 dir,
		Setup:               Setup,
		Cmds:                ScriptCmds(),
		RequireUniqueNames:  true,
		RequireExplicitExec: false,
	}
}

// Setup gives each script a private HOME ($WORK/home, with a git identity)
// and a predictable git, and keeps the caller's PATH so real tools (git,
// msb, podman) are found.
func Setup(env *testscript.Env) error {
	home := filepath.Join(env.WorkDir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}
	// asb, asb-task and asb-export as small programs of their own, first
	// on PATH, before testscript's copies of this test binary (which start
	// 3.5 times slower: testenv.ScriptTools).
	tools, err := testenv.ScriptTools()
	if err != nil {
		return err
	}
	env.Setenv("HOME", home)
	env.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	env.Setenv("PATH", tools+string(filepath.ListSeparator)+os.Getenv("PATH"))
	for k, v := range map[string]string{
		"GIT_AUTHOR_NAME":     "asb test",
		"GIT_AUTHOR_EMAIL":    "asb-test@example.com",
		"GIT_COMMITTER_NAME":  "asb test",
		"GIT_COMMITTER_EMAIL": "asb-test@example.com",
		"GIT_CONFIG_NOSYSTEM": "1",
		"GIT_CONFIG_GLOBAL":   filepath.Join(home, ".gitconfig"),
		"GIT_TERMINAL_PROMPT": "0",
		// A quiet, fixed default branch whatever the host's git says.
		"GIT_CONFIG_COUNT":   "1",
		"GIT_CONFIG_KEY_0":   "init.defaultBranch",
		"GIT_CONFIG_VALUE_0": "main",
		// msb keeps its state here, never in the real ~/.microsandbox.
		"MSB_HOME": filepath.Join(env.WorkDir, "msb-home"),
	} {
		env.Setenv(k, v)
	}
	return nil
}

// ScriptCmds are the commands asb's scripts may use besides testscript's:
//
//	mode PATH PERM      PATH's permission bits are PERM (octal, e.g. 0600)
//	tree DIR            print every entry under DIR (type, mode, size, sha256)
//	                    to stdout, for `cp stdout before` / `cmp stdout before`
//	fakes DIR           link the stand-in msb, docker and podman into DIR
//	                    (put DIR first on PATH; their state goes to
//	                    $ASB_FAKE_STATE, calls.log lists every call)
//	errline REGEXP      the last command's stderr is exactly one line,
//	                    "asb: …", matching REGEXP, with no panic or trace
//	plant, everything, intact
//	                    the hostile VM and the user after it (hostile_test.go)
//	noraw               the last command's output holds no character a
//	                    terminal obeys (hostile_test.go)
func ScriptCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"mode":       cmdMode,
		"tree":       cmdTree,
		"errline":    cmdErrline,
		"fakes":      cmdFakes,
		"plant":      cmdPlant,
		"everything": cmdEverything,
		"intact":     cmdIntact,
		"noraw":      cmdNoRaw,
		"impostor":   cmdImpostor,
	}
}

func cmdMode(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: mode PATH PERM")
	}
	want, err := strconv.ParseUint(args[1], 8, 32)
	if err != nil {
		ts.Fatalf("mode: %q is not an octal mode", args[1])
	}
	fi, err := os.Stat(ts.MkAbs(args[0]))
	ts.Check(err)
	got := fi.Mode().Perm()
	if (got == fs.FileMode(want)) == neg {
		ts.Fatalf("%s has mode %04o; want %s%04o", args[0], got, map[bool]string{true: "not ", false: ""}[neg], want)
	}
}

func cmdTree(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: tree DIR")
	}
	dir := ts.MkAbs(args[0])
	var lines []string
	if _, err := os.Lstat(dir); os.IsNotExist(err) {
		fmt.Fprintln(ts.Stdout(), "(absent)")
		return
	}
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := e.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		line := fmt.Sprintf("%s %s", fi.Mode(), filepath.ToSlash(rel))
		switch {
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			line += fmt.Sprintf(" %d %x", len(b), sha256.Sum256(b))
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			line += " -> " + target
		}
		lines = append(lines, line)
		return nil
	})
	ts.Check(err)
	sort.Strings(lines)
	fmt.Fprintln(ts.Stdout(), strings.Join(lines, "\n"))
}

var traceRe = regexp.MustCompile(`panic|goroutine [0-9]+|\.go:[0-9]+`)

func cmdErrline(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: errline REGEXP")
	}
	stderr := ts.ReadFile("stderr")
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if len(lines) != 1 || !bytes.HasSuffix([]byte(stderr), []byte("\n")) {
		ts.Fatalf("stderr is not exactly one line:\n%s", stderr)
	}
	if !strings.HasPrefix(lines[0], "asb: ") {
		ts.Fatalf("stderr does not start with \"asb: \": %q", lines[0])
	}
	if traceRe.MatchString(lines[0]) {
		ts.Fatalf("stderr looks like a crash: %q", lines[0])
	}
	re, err := regexp.Compile(args[0])
	ts.Check(err)
	if !re.MatchString(lines[0]) {
		ts.Fatalf("stderr %q does not match %q", lines[0], args[0])
	}
}

// cmdFakes links the stand-ins into a folder: the small stand-in program
// testenv.ScriptTools built, which runs as the one its name says.
func cmdFakes(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: fakes DIR")
	}
	tools, err := testenv.ScriptTools()
	ts.Check(err)
	ts.Check(fakes.Link(filepath.Join(tools, "fake"), ts.MkAbs(args[0])))
}

// removingScriptTools runs the tests, then deletes what they left outside
// their own temporary folders: the builds, the fleet tests' stand-in and
// this binary's approvals (testscript.Main exits the process when Run
// returns, so nothing after it would run; each run of this binary had left
// its approvals' folder and the stand-in, 13 MB, in the temp dir).
type removingScriptTools struct {
	m           *testing.M
	removeState func()
}

func (r removingScriptTools) Run() int {
	defer r.removeState()
	defer removeFakeBinary()
	defer testenv.RemoveBuilds()
	return r.m.Run()
}
