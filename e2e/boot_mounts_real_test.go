package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agents-sandbox/asb/internal/testkit/testenv"
)

// Every mount form asb validate accepts, as the real-boot VM sees it,
// against what `asb boundary` says of it (issue 24, item 3): a relative
// bind with and without ./, the short SOURCE:GUEST[:ro] form, an absolute
// bind with consent, a tmpfs and a named volume. The scenario
// (scenario.sh, "mount forms") makes the folder outside the outer folder,
// since it depends on where /data is; each bind's folder holds a .mark
// with its own resolved path, so the VM reads back which host folder it
// really got.
//
// Forms validate refuses: an empty bind ("" or "."), the outer folder
// itself; a bind with a link on its path, which msb 0.7.2 does not follow
// (schema.BindLink, boundary_links.txtar): TestRealBootLinkBind watches the
// real msb fail to start such a VM.

// bootMountForms are the mounts the boot scenario adds to sandbox.yaml;
// @DATA@ is the guest's /data (the scenario replaces it).
var bootMountForms = []struct{ yaml, guest string }{
	{"  - ./d1:/d1\n", "/d1"},
	{"  - ./d2:/d2-ro:ro\n", "/d2-ro"},
	{"  - bind: d3\n    target: /d3\n", "/d3"},
	{"  - bind: @DATA@/outside-x # asb: allow-host\n    target: /outside\n", "/outside"},
	{"  - tmpfs: {}\n    target: /scratch\n", "/scratch"},
	{"  - named: extra-vol # asb: allow-volume\n    target: /vol\n", "/vol"},
}

// addMountForms puts bootMountForms into the folder's sandbox.yaml, after
// the agent's config mount, and lists their guest paths for the scenario.
func addMountForms(t *testing.T, dir string, g *testenv.Guest) {
	t.Helper()
	p := filepath.Join(dir, "sandbox.yaml")
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	const at = "    readonly: true\n"
	if !strings.Contains(string(raw), at) {
		t.Fatalf("sandbox.yaml has no %q after the agent's config mount", at)
	}
	var add, guests strings.Builder
	for _, m := range bootMountForms {
		add.WriteString(m.yaml)
		guests.WriteString(m.guest + "\n")
	}
	writeFile(t, p, strings.Replace(string(raw), at, at+add.String(), 1), 0o644)
	g.WriteFile(t, "mount-targets", []byte(guests.String()), 0o644)
}

// mountSeen is one line of the scenario's mounts_vm step: what the VM
// found at a guest path.
type mountSeen struct{ mark, write, fs string }

func parseMountsVM(t *testing.T, out string) map[string]mountSeen {
	t.Helper()
	seen := map[string]mountSeen{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(l, "|")
		if len(f) != 4 {
			t.Fatalf("mounts_vm printed %q", l)
		}
		seen[f[0]] = mountSeen{mark: f[1], write: f[2], fs: f[3]}
	}
	return seen
}

// TestRealBootMountForms: for every mount form, the VM finds at the guest
// path the host folder `asb boundary` names (links followed), read-only
// where boundary says ro, a tmpfs for tmpfs, and the named volume's own
// store; a write from the VM lands in the folder boundary names.
func TestRealBootMountForms(t *testing.T) {
	s := bootRun(t)
	var b struct {
		Mounts []struct{ Guest, Kind, Source, Host, Via, Access string }
	}
	if err := json.Unmarshal([]byte(ok(t, s, "mounts_boundary")), &b); err != nil {
		t.Fatalf("asb boundary --format json: %v", err)
	}
	seen := parseMountsVM(t, ok(t, s, "mounts_vm"))
	wrote := ok(t, s, "mounts_host")
	for _, m := range bootMountForms {
		got, okVM := seen[m.guest]
		var view *struct{ Guest, Kind, Source, Host, Via, Access string }
		for i := range b.Mounts {
			if b.Mounts[i].Guest == m.guest {
				view = &b.Mounts[i]
			}
		}
		if view == nil || !okVM {
			t.Errorf("%s: boundary lists it: %v; the VM looked at it: %v", m.guest, view != nil, okVM)
			continue
		}
		t.Logf("%-9s boundary: %s %s %s → %s (via %q); the VM: mark %q, write %s, fs %s",
			m.guest, view.Kind, view.Access, view.Source, view.Host, view.Via, got.mark, got.write, got.fs)
		checkMountForm(t, m.guest, view.Kind, view.Host, view.Access, got, wrote)
	}
}

func checkMountForm(t *testing.T, guest, kind, host, access string, got mountSeen, wrote string) {
	t.Helper()
	switch kind {
	case "bind":
		if got.mark != host {
			t.Errorf("%s: boundary says the VM sees %s of the host; the VM sees %q", guest, host, got.mark)
		}
		if got.fs == "tmpfs" || got.fs == "" {
			t.Errorf("%s: a bind, but the VM has %q there", guest, got.fs)
		}
		if access == "rw" && !strings.Contains(wrote, host+" vm\n") {
			t.Errorf("%s: the VM's write did not land in %s:\n%s", guest, host, wrote)
		}
	case "tmpfs":
		if got.fs != "tmpfs" || got.mark != "" {
			t.Errorf("%s: boundary says memory; the VM has fs %q, mark %q", guest, got.fs, got.mark)
		}
	case "named":
		if !strings.Contains(wrote, "/extra-vol/") {
			t.Errorf("%s: the VM's write is not in msb's store of the volume extra-vol:\n%s", guest, wrote)
		}
	default:
		t.Errorf("%s: boundary says kind %q", guest, kind)
	}
	if refused := strings.HasPrefix(got.write, "refused"); refused != (access == "ro") {
		t.Errorf("%s: boundary says %s; the VM's write: %s", guest, access, got.write)
	} else if refused && !strings.Contains(got.write, "Read-only") && !strings.Contains(got.write, "Permission denied") {
		t.Errorf("%s: a write failed, but not as read-only: %s", guest, got.write)
	}
}

// TestRealBootLinkBind: msb does not follow a link on a bind's path (here
// a link to a folder inside the outer folder, in an absolute path): the VM
// fails to start, which is why validate refuses such a bind.
func TestRealBootLinkBind(t *testing.T) {
	s := bootRun(t)
	st := s.Step(t, "link_msb")
	if st.Code == 0 || !strings.Contains(st.Out+st.Err, "Too many levels of symbolic links") {
		t.Fatalf("msb create with a bind through a link: exit %d, want a failure to start with ELOOP (else validate's BindLink is stricter than msb):\n%s%s", st.Code, st.Out, st.Err)
	}
}
