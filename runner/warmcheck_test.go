package runner

import "testing"

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
