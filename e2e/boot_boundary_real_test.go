package e2e

import (
	"regexp"
	"strings"
	"testing"

	"github.com/agents-sandbox/asb/internal/testkit/testenv"
)

// The boundary observed from inside a VM that asb created (issue 24, item
// 3). Each test reads the one real-boot session (bootRun).

// TestRealBootWorkspaceOwner: a file, a script and a folder the VM writes
// in /workspace appear in the outer folder's workspace/, owned by the user
// who owns workspace/ and runs asb (in the nested guest an ordinary user,
// uid 2000: not root, not the VM's dev, 1000), with the modes the VM set
// (sandbox.yaml mounts workspace/ with host_permissions: mirror); in the
// VM they are dev's.
func TestRealBootWorkspaceOwner(t *testing.T) {
	s := bootRun(t)
	owner := s.Notes["ws_owner"]
	if s.Shape == testenv.ShapeNested && owner != "2000 2000" {
		t.Fatalf("workspace/ belongs to %q in the guest, want 2000 2000 (the scenario's user)", owner)
	}
	ok(t, s, "ws_write")
	vm := strings.TrimSpace(ok(t, s, "ws_vm_stat"))
	if want := "/workspace/from-vm 1000 1000 640\n/workspace/dir-vm 1000 1000 750\n/workspace/run.sh 1000 1000 755"; vm != want {
		t.Errorf("in the VM (name uid gid mode):\n%s\nwant:\n%s", vm, want)
	}
	host := strings.TrimSpace(ok(t, s, "ws_stat"))
	t.Logf("the VM sees:\n%s\nthe host has:\n%s", vm, host)
	lines := strings.Split(host, "\n")
	names := []string{"workspace", "workspace/from-vm", "workspace/dir-vm", "workspace/run.sh"}
	modes := []string{"", "640", "750", "755"} // workspace/ itself: as the host made it
	if len(lines) != len(names) {
		t.Fatalf("stat on the host: %q", host)
	}
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) != 4 || f[0] != names[i] || f[1]+" "+f[2] != owner || (modes[i] != "" && f[3] != modes[i]) {
			t.Errorf("on the host: %q; want %s owned by %s, mode %s", l, names[i], owner, modes[i])
		}
	}
}

// TestRealBootModes: what the VM sets is what the host sees (issue 38): a
// file made under the VM's umask 022 is 0644 on the host, a script made
// executable 0755, group-only access 0640 and 0750, a file whose mode the
// VM changed twice has the last one (steps_modes.sh).
func TestRealBootModes(t *testing.T) {
	s := bootRun(t)
	ok(t, s, "modes_write")
	want := []string{"plain.txt 644", "tool.sh 755", "grp.txt 640", "team 750", "plain-later.txt 644"}
	for _, view := range []struct{ step, prefix string }{{"modes_vm", "/workspace/"}, {"modes_host", "workspace/"}} {
		got := strings.Split(strings.TrimSpace(ok(t, s, view.step)), "\n")
		var w []string
		for _, x := range want {
			w = append(w, view.prefix+x)
		}
		if strings.Join(got, "\n") != strings.Join(w, "\n") {
			t.Errorf("%s (name mode):\n%s\nwant:\n%s", view.step, strings.Join(got, "\n"), strings.Join(w, "\n"))
		}
	}
}

// TestRealBootConfigReadOnly: the agent's config folder is read-only in
// the VM, and nothing the VM tried reached the host's copy.
func TestRealBootConfigReadOnly(t *testing.T) {
	s := bootRun(t)
	st := s.Step(t, "cfg_write")
	if st.Code == 0 || !(strings.Contains(st.Err, "Read-only file system") || strings.Contains(st.Err, "Permission denied")) {
		t.Fatalf("a write to the agent's config in the VM: exit %d, %q; want EROFS or EACCES", st.Code, st.Err)
	}
	if out := ok(t, s, "cfg_host"); strings.Contains(out, "vm-wrote") {
		t.Fatalf("the VM's write reached the host's config folder: %q", out)
	}
}

// TestRealBootCanaries: a search of the VM's whole file system (as root,
// mounts included) finds none of the canaries of secrets.env,
// secrets.yaml, Taskfile.yml and .asb/; it finds the control value put in
// workspace/, so the search itself works.
func TestRealBootCanaries(t *testing.T) {
	s := bootRun(t)
	got := strings.Fields(ok(t, s, "canary_fs"))
	if len(got) != 1 || got[0] != "/workspace/control.txt" {
		t.Fatalf("files in the VM holding a canary: %q; want only /workspace/control.txt (the control)", got)
	}
}

// TestRealBootSecretEnv: no secret's value is in the environment of any
// process of the VM, nor of vm:exec's; the agent's variable holds msb's
// placeholder.
func TestRealBootSecretEnv(t *testing.T) {
	s := bootRun(t)
	root, dev := ok(t, s, "env_root"), ok(t, s, "env_dev")
	for _, v := range []string{bootSecretOC, bootSecretGH} {
		if strings.Contains(root+dev, v) {
			t.Fatalf("a secret's value is in the VM's environment:\n%s\n%s", root, dev)
		}
	}
	for _, want := range []string{"OPENCODE_API_KEY=$MSB_OPENCODE_API_KEY", "GITHUB_TOKEN=$MSB_GITHUB_TOKEN"} {
		if !strings.Contains(dev, want+"\n") {
			t.Errorf("vm:exec's environment lacks %s:\n%s", want, dev)
		}
	}
}

// TestRealBootContainerDisk: /var/lib/containers is a disk of its own, of
// the Taskfile's CONTAINER_DISK size (8G).
func TestRealBootContainerDisk(t *testing.T) {
	s := bootRun(t)
	out := ok(t, s, "disk")
	m := regexp.MustCompile(`(?m)^bytes=(\d+)$`).FindStringSubmatch(out)
	if m == nil || m[1] != "8589934592" {
		t.Fatalf("the disk at /var/lib/containers: %q; want bytes=8589934592 (8G)", out)
	}
	if !regexp.MustCompile(`(?m)^dev=/dev/vd[a-z]+$`).MatchString(out) {
		t.Fatalf("/var/lib/containers is not a disk of its own: %q", out)
	}
}

// TestRealBootHome: /home/dev keeps a file across vm:stop + vm:start and
// vm:rm + vm:create, and loses it after home:reset.
func TestRealBootHome(t *testing.T) {
	s := bootRun(t)
	ok(t, s, "ws_write") // wrote /home/dev/keep too
	for _, step := range []string{"home_after_start", "home_after_rm"} {
		if out := ok(t, s, step); strings.TrimSpace(out) != "kept" {
			t.Errorf("%s: /home/dev/keep holds %q, want kept", step, out)
		}
	}
	ok(t, s, "reset")
	ok(t, s, "reap_next") // the next VM made, on the reset home
	if st := s.Step(t, "home_after_reset"); st.Code == 0 {
		t.Fatalf("/home/dev/keep is still there after home:reset: %q", st.Out+st.Err)
	}
}

// TestRealBootReap: Ctrl-C during a real boot (asb task vm:create, signal
// to its process group once msb's machine process runs) ends the boot and
// removes the half-made VM; after kill -9 of asb task agent during a boot,
// the next asb task agent boots cleanly and attaches.
func TestRealBootReap(t *testing.T) {
	s := bootRun(t)
	booting := regexp.MustCompile(`machine after \d+ s: [1-9]\d* process`)
	out := s.Step(t, "reap_int").Out
	if !booting.MatchString(out) || strings.Contains(out, "asb exit 0") {
		t.Fatalf("Ctrl-C of vm:create during the boot:\n%s", out)
	}
	if got := ok(t, s, "reap_int_left"); got != "machines: 0\nvms: \n" {
		t.Fatalf("after Ctrl-C of vm:create:\n%s\nwant no msb machine and no VM left", got)
	}
	if out := s.Step(t, "reap_kill").Out; !booting.MatchString(out) || !strings.Contains(out, "asb exit 137") {
		t.Fatalf("kill -9 of asb task agent during the boot:\n%s", out)
	}
	if out := ok(t, s, "reap_next"); !strings.Contains(out, "opencode-standin dev 1000 /workspace") {
		t.Fatalf("asb task agent after the kill -9:\n%s", out)
	}
	if got := ok(t, s, "reap_next_left"); !regexp.MustCompile(`^machines: 1\nvms: \S+ \n$`).MatchString(got) {
		t.Fatalf("after the next agent: %q; want one VM and its machine", got)
	}
}

// TestRealBootHomeOwner: dev owns its home and the folders msb made on the
// way to the agent's config mount (vm:create gives them back: rootless
// podman refuses a ~/.config that is not dev's, as the real image showed);
// the config mount itself is left as it is.
func TestRealBootHomeOwner(t *testing.T) {
	s := bootRun(t)
	got := strings.Fields(ok(t, s, "home_owner"))
	if len(got) != 6 || got[1] != "dev" || got[3] != "dev" {
		t.Fatalf("owners in the VM: %q; want /home/dev and /home/dev/.config dev's", got)
	}
	t.Logf("in the VM: %s", strings.Join(got, " "))
}
