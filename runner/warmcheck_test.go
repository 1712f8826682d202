package runner

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestVMCheck: the generated Taskfile's two checks of the VM are known by
// their shape, and nothing else is: a negated check, another verb, a
// pipe into something else, an expansion or a second command each run as
// written.
func TestVMCheck(t *testing.T) {
	for cmd, want := range map[string]string{
		`msb inspect vm1 >/dev/null 2>&1`: "vm1",
		`msb inspect 'vm1'`:               "vm1",
		`msb status vm1 --format json 2>/dev/null | grep -q '"status": *"Running"'`:   "vm1",
		`msb status 'vm1' --format json | grep -q '"status": *"Running"'`:             "vm1",
		`! msb status vm1 --format json 2>/dev/null | grep -q '"status": *"Running"'`: "",
		`! msb inspect vm1 >/dev/null 2>&1`:                                           "",
		`msb inspect vm1 > /tmp/x`:                                                    "",
		`msb inspect $VM`:                                                             "",
		`msb inspect vm1; true`:                                                       "",
		`msb inspect vm1 || true`:                                                     "",
		`msb volume inspect vm1 >/dev/null 2>&1`:                                      "",
		`msb image inspect vm1`:                                                       "",
		`msb status vm1 --format json | grep -q '"status": *"Stopped"'`:               "",
		`msb status vm1 --format json | grep -vq '"status": *"Running"'`:              "",
		`FOO=1 msb inspect vm1`:                                                       "",
		`msb inspect --format json`:                                                   "",
		`docker image inspect vm1 >/dev/null 2>&1`:                                    "",
		`[ -d ./workspace ]`:                                                          "",
	} {
		if got := VMCheck(cmd); got != want {
			t.Errorf("VMCheck(%q) = %q, want %q", cmd, got, want)
		}
	}
}

// TestDirCheck: vm:create's precondition is known by its shape, and
// nothing else is.
func TestDirCheck(t *testing.T) {
	for cmd, want := range map[string]string{
		`[ -d ./workspace ]`:           "./workspace",
		`[ -d 'my dir' ]`:              "my dir",
		`test -d ./workspace`:          "./workspace",
		`[ ! -d ./workspace ]`:         "",
		`! [ -d ./workspace ]`:         "",
		`[ -f ./workspace ]`:           "",
		`[ -d $WS ]`:                   "",
		`[ -d ./a ] && [ -d ./b ]`:     "",
		`[ -d ./workspace ] >/tmp/x`:   "",
		`X=1 [ -d ./workspace ]`:       "",
		`[ -d ./workspace ]; rm -rf /`: "",
		`[ -d "" ]`:                    "",
		`[ -d ]`:                       "",
		`test -d`:                      "",
		`[[ -d ./workspace ]]`:         "",
	} {
		if got := DirCheck(cmd); got != want {
			t.Errorf("DirCheck(%q) = %q, want %q", cmd, got, want)
		}
	}
}

// TestChecksHoldDirByStat: a folder precondition is answered by a stat,
// as the shell's test answers it (a link to a folder is one; a file, a
// missing name or a dangling link is not), and a failed one fails the run.
func TestChecksHoldDirByStat(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Mkdir(filepath.Join(dir, "workspace"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "file"), nil, 0o644))
	must(os.Symlink("workspace", filepath.Join(dir, "link")))
	must(os.Symlink("gone", filepath.Join(dir, "dangling")))
	for name, want := range map[string]bool{"./workspace": true, "link": true, dir + "/workspace": true,
		"file": false, "missing": false, "dangling": false} {
		checks := []WarmStep{{Task: "vm:create", Kind: "precondition", Cmd: "[ -d " + name + " ]", Dir: dir, IsDir: name}}
		if got := checksHold(context.Background(), checks, MSB{}); got != want {
			t.Errorf("[ -d %s ]: %v, want %v", name, got, want)
		}
	}
}

// TestChecksHoldDirFromTheRecord: whether a check is a test for a folder
// is the record's to say (judged once, when it was made): the warm run
// stats the path it names and parses no shell; a check the record does not
// mark runs as written. (The commands here contradict the marks, so that
// which one decided shows.)
func TestChecksHoldDirFromTheRecord(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "workspace"), 0o755); err != nil {
		t.Fatal(err)
	}
	marked := []WarmStep{{Task: "vm:create", Kind: "precondition", Cmd: "exit 1", Dir: dir, IsDir: "./workspace"}}
	if !checksHold(context.Background(), marked, MSB{}) {
		t.Error("a check marked as a test for ./workspace failed: its command ran instead of a stat")
	}
	unmarked := []WarmStep{{Task: "vm:create", Kind: "precondition", Cmd: "[ -d ./missing ]", Dir: dir}}
	if checksHold(context.Background(), unmarked, MSB{}) {
		t.Error("an unmarked [ -d ./missing ] passed")
	}
}

// TestDirCheckWithArgs: a folder check that holds the run's arguments is
// judged on the check they make (marks filled in), not on the marks.
func TestDirCheckWithArgs(t *testing.T) {
	r := &WarmRecord{Checks: []WarmStep{
		{Kind: "precondition", Cmd: "[ -d " + ArgsMark + " ]", IsDir: ArgsMark},
		{Kind: "precondition", Cmd: "[ -d " + ArgsMarkQ + " ]", IsDir: ArgsMarkQ},
		{Kind: "precondition", Cmd: "[ -d ./workspace ] && echo " + ArgsMark},
	}}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"./ws"}, []string{"./ws", "./ws", ""}},
		{[]string{"my dir"}, []string{"my dir", "'my dir'", ""}},
		{[]string{"a", "b"}, []string{"", "a b", ""}},
	} {
		w, err := r.WithArgs(c.args)
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range w.Checks {
			if s.IsDir != c.want[i] {
				t.Errorf("%q: check %d (%s): IsDir %q, want %q", c.args, i, s.Cmd, s.IsDir, c.want[i])
			}
		}
	}
}
