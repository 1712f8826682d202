package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/internal/testkit/testenv"
)

// editFolder makes an outer folder for the edit tests with the asb binary.
func editFolder(t *testing.T, asb string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "f")
	if out, err := exec.Command(asb, "init", "--agent", "opencode", "--no-git", dir).CombinedOutput(); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	return dir
}

// TestConcurrentEditsKeepEveryEdit runs four edit commands at once in one
// folder, 50 times over: two `network allow` of different hosts, a
// `secret add` (which also edits sandbox.yaml's allow list) and a `port
// add`. Every one reports success and every edit is in the files after the
// round. (Before the edit commands took the folder's lock, both allows said
// "added" and one host was lost.)
func TestConcurrentEditsKeepEveryEdit(t *testing.T) {
	testenv.Slow(t)
	asb := testenv.BuildAsb(t)
	dir := editFolder(t, asb)
	for round := range 50 {
		cmds := [][]string{
			{"network", "allow", fmt.Sprintf("a%d.example.com", round)},
			{"network", "allow", fmt.Sprintf("b%d.example.com", round)},
			{"secret", "add", fmt.Sprintf("TOKEN_%d", round), "--allow", fmt.Sprintf("s%d.example.com", round)},
			{"port", "add", fmt.Sprintf("%d:%d", 20000+round, 8000+round)},
		}
		var wg sync.WaitGroup
		outs := make([]string, len(cmds))
		errs := make([]error, len(cmds))
		for i, args := range cmds {
			wg.Go(func() {
				b, err := exec.Command(asb, append(args, "-d", dir)...).CombinedOutput()
				outs[i], errs[i] = string(b), err
			})
		}
		wg.Wait()
		for i := range cmds {
			if errs[i] != nil {
				t.Fatalf("round %d: asb %s: %v\n%s", round, strings.Join(cmds[i], " "), errs[i], outs[i])
			}
		}
		sandbox, _ := os.ReadFile(filepath.Join(dir, "sandbox.yaml"))
		secrets, _ := os.ReadFile(filepath.Join(dir, "secrets.yaml"))
		for _, want := range []string{cmds[0][2], cmds[1][2], cmds[2][4], fmt.Sprintf("%d:%d", 20000+round, 8000+round)} {
			if !strings.Contains(string(sandbox), want) {
				t.Fatalf("round %d: sandbox.yaml lost %s:\n%s", round, want, sandbox)
			}
		}
		if !strings.Contains(string(secrets), cmds[2][2]+":") {
			t.Fatalf("round %d: secrets.yaml lost %s:\n%s", round, cmds[2][2], secrets)
		}
	}
	assertNoStaging(t, dir)
}

// TestKilledEditsLeaveBeforeOrAfter kills each writing command with SIGKILL
// at a random moment, 50 times per command: every file of the folder is
// then as it was before the command or as a finished run leaves it, never a
// mix (or a half-written file),
// validate takes the folder as it is, and after the next asb command that
// writes (it cleans under the folder's lock; a looking command never walks
// the folder for them) no staging file (which may hold secrets.env's
// values) is left.
func TestKilledEditsLeaveBeforeOrAfter(t *testing.T) {
	testenv.Slow(t)
	asb := testenv.BuildAsb(t)
	rng := rand.New(rand.NewPCG(11, 29))
	for _, args := range [][]string{
		{"secret", "add", "KILL_TOKEN", "--allow", "kill.example.com"},
		{"network", "allow", "kill.example.com"},
		{"port", "add", "21000:8000"},
		{"mount", "add", "SUB", "/data/sub", "--ro"},
		{"agent", "add", "codex"},
		{"sync"},
	} {
		t.Run(strings.Join(args[:min(2, len(args))], "_"), func(t *testing.T) {
			before := editFolder(t, asb)
			if err := os.MkdirAll(filepath.Join(before, "workspace", "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			if args[0] == "sync" { // a fresh clone: no secrets.env yet
				if err := os.Remove(filepath.Join(before, "secrets.env")); err != nil {
					t.Fatal(err)
				}
			}
			after := filepath.Join(t.TempDir(), "after")
			copyTree(t, before, after)
			// A copy is another folder: sync sets up only one its user
			// approved (asb trust, outside the timed run).
			approve := func(dir string) {
				if args[0] == "sync" {
					if out, err := exec.Command(asb, "trust", "-d", dir).CombinedOutput(); err != nil {
						t.Fatalf("asb trust: %v\n%s", err, out)
					}
				}
			}
			approve(after)
			start := time.Now()
			if out, err := exec.Command(asb, append(withSub(args, after), "-d", after)...).CombinedOutput(); err != nil {
				t.Fatalf("a full run: %v\n%s", err, out)
			}
			// Kills spread over a whole run's length and a little more.
			span := int(time.Since(start).Microseconds()*5/4) + 1
			// At least 50 kills; under a machine's varying load one run's
			// length is a poor guide, so while every kill so far landed on
			// one side of the write, the span widens (or narrows) every 25.
			written, untouched := 0, 0
			for round := 0; round < 50 || (written == 0 || untouched == 0) && round < 200; round++ {
				if round > 0 && round%25 == 0 && written == 0 {
					span *= 2
				} else if round > 0 && round%25 == 0 && untouched == 0 {
					span = span/2 + 1
				}
				dir := filepath.Join(t.TempDir(), fmt.Sprintf("k%d", round))
				copyTree(t, before, dir)
				approve(dir)
				cmd := exec.Command(asb, append(withSub(args, dir), "-d", dir)...)
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				time.Sleep(time.Duration(rng.IntN(span)) * time.Microsecond)
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				for _, name := range filesOf(t, before, after) {
					got := readOr(t, dir, name)
					b, a := readOr(t, before, name), readOr(t, after, name)
					if got != b && got != a {
						t.Fatalf("round %d: %s is neither as before nor as after:\n%s", round, name, got)
					}
					if got != b {
						written++
					} else {
						untouched++
					}
				}
				out, err := exec.Command(asb, "validate", dir).CombinedOutput()
				if err != nil && !strings.Contains(string(out), "warning") {
					t.Fatalf("round %d: validate after the kill: %v\n%s", round, err, out)
				}
				if out, err := exec.Command(asb, "network", "allow", "next.example.com", "-d", dir).CombinedOutput(); err != nil {
					t.Fatalf("round %d: the next edit after the kill: %v\n%s", round, err, out)
				}
				assertNoStaging(t, dir)
			}
			t.Logf("of the files of the killed runs, %d were written, %d untouched", written, untouched)
			if written == 0 || untouched == 0 {
				t.Error("every kill landed on the same side of the write: the test proves nothing (tune the delays)")
			}
		})
	}
}

// withSub puts the folder's workspace/sub in place of SUB in args.
func withSub(args []string, dir string) []string {
	out := append([]string(nil), args...)
	for i, a := range out {
		if a == "SUB" {
			out[i] = filepath.Join(dir, "workspace", "sub")
		}
	}
	return out
}

// filesOf lists the files of the folders (relative; asb's runtime state in
// .asb/ aside), each once.
func filesOf(t *testing.T, dirs ...string) []string {
	t.Helper()
	seen := map[string]bool{}
	var out []string
	for _, dir := range dirs {
		_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			if d.IsDir() && (rel == ".asb" || d.Name() == ".git") {
				return filepath.SkipDir
			}
			if !d.IsDir() && !seen[rel] {
				seen[rel] = true
				out = append(out, rel)
			}
			return nil
		})
	}
	return out
}

func readOr(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return "<absent>"
	}
	return string(b)
}

// assertNoStaging fails when a staging file (.NAME.asb-…) is anywhere in
// the outer folder dir.
func assertNoStaging(t *testing.T, dir string) {
	t.Helper()
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && stagingName.MatchString(filepath.ToSlash(p)) {
			t.Errorf("staging file left: %s", p)
		}
		return nil
	})
}

// copyTree copies the folder src to dst (files, folders and modes).
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v\n%s", err, out)
	}
}
