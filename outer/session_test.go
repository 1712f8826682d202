package outer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agents-sandbox/asb/schema"
)

const sessionSandbox = `# the folder's
image: x:latest
mounts:
  # The project.
  - bind: ./workspace
    target: /workspace
  - "./opencode:/etc/opencode:ro"
ports:
  - "5173:5173"
  - 127.0.0.1:8080:80/udp
network:
  ports:
    - "9000:9000"
`

func TestDeriveSessionConfChangesOnlyWorkspaceAndPorts(t *testing.T) {
	s := Session{Name: "one", Paths: schema.SessionPathsOf("one"),
		Ports: map[string]string{"5173:5173": "40001:5173", "127.0.0.1:8080:80/udp": "127.0.0.1:40002:80/udp", "9000:9000": "40003:9000"}}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	got, err := DeriveSessionConf([]byte(sessionSandbox), s, dir)
	if err != nil {
		t.Fatal(err)
	}
	out := string(got)
	// Beside the checkout: msb reads relative paths against the file's
	// folder, and starts no VM with a .. in one: the others are absolute.
	for _, want := range []string{`bind: "./workspace"`, `- "40001:5173"`, `- "127.0.0.1:40002:80/udp"`, `- "40003:9000"`,
		`"` + dir + `/opencode:/etc/opencode:ro"`, "# The project.", "Written by asb from sandbox.yaml for session one"} {
		if !strings.Contains(out, want) {
			t.Errorf("derived config lacks %q:\n%s", want, out)
		}
	}
	for _, gone := range []string{"bind: ./workspace", `"5173:5173"`, "9000:9000", `"./opencode`, ".."} {
		if strings.Contains(out, gone) {
			t.Errorf("derived config still has %q:\n%s", gone, out)
		}
	}
	// As validate judges it: paths against the outer folder.
	asFolder, err := sessionConfAsFolder([]byte(sessionSandbox), s)
	if err != nil || !strings.Contains(string(asFolder), `bind: "./.asb/sessions/one/workspace"`) || !strings.Contains(string(asFolder), `"./opencode:/etc/opencode:ro"`) {
		t.Errorf("as the folder: %v\n%s", err, asFolder)
	}
	// The short form of the workspace mount is pointed at the checkout too.
	short := strings.Replace(sessionSandbox, "  - bind: ./workspace\n    target: /workspace\n", "  - ./workspace:/workspace\n", 1)
	got, err = DeriveSessionConf([]byte(short), s, dir)
	if err != nil || !strings.Contains(string(got), `"./workspace:/workspace"`) {
		t.Errorf("short form: %v\n%s", err, got)
	}
	// A port the session has no host port for is an error, never the folder's.
	delete(s.Ports, "9000:9000")
	if _, err := DeriveSessionConf([]byte(sessionSandbox), s, dir); err == nil || !strings.Contains(err.Error(), "no host port") {
		t.Errorf("missing port: %v", err)
	}
	// No workspace mount: nothing to point at the checkout.
	if _, err := DeriveSessionConf([]byte("image: x\nmounts: []\n"), s, dir); err == nil || !strings.Contains(err.Error(), "binds no folder at /workspace") {
		t.Errorf("no workspace: %v", err)
	}
}

// TestDeriveSessionConfFolderPaths: msb's short form SRC:TARGET cannot
// carry a folder path with a colon: such a mount is refused with how to
// write it; the long form carries it. A path with ${ is refused in either.
func TestDeriveSessionConfFolderPaths(t *testing.T) {
	s := Session{Name: "one", Paths: schema.SessionPathsOf("one"), Ports: map[string]string{}}
	dir := filepath.Join(t.TempDir(), "a:b")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	short := "image: x\nmounts:\n  - ./workspace:/workspace\n  - ./opencode:/etc/opencode:ro\n"
	if _, err := DeriveSessionConf([]byte(short), s, dir); err == nil || !strings.Contains(err.Error(), "write it as bind: and target:") {
		t.Errorf("short form in a folder with a colon: %v", err)
	}
	long := "image: x\nmounts:\n  - ./workspace:/workspace\n  - bind: ./opencode\n    target: /etc/opencode\n"
	got, err := DeriveSessionConf([]byte(long), s, dir)
	if err != nil || !strings.Contains(string(got), "a:b/opencode") {
		t.Errorf("long form in a folder with a colon: %v\n%s", err, got)
	}
	// A disk image's path is the folder's as a bind's is (an absolute one
	// stays as written): the session's config lives in .asb/sessions/NAME/.
	disk := "image: x\nmounts:\n  - ./workspace:/workspace\n  - disk: ./data.img\n    target: /data\n  - disk: /srv/other.img\n    target: /other\n"
	got, err = DeriveSessionConf([]byte(disk), s, dir)
	if err != nil || !strings.Contains(string(got), `disk: "`+dir+`/data.img"`) || !strings.Contains(string(got), "disk: /srv/other.img") {
		t.Errorf("disk mounts of a session's config: %v\n%s", err, got)
	}
	// msb expands ${…} in a config: a folder path with one would mount
	// what the environment names.
	dollar := filepath.Join(t.TempDir(), "x${HOME}")
	if err := os.Mkdir(dollar, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := DeriveSessionConf([]byte(long), s, dollar); err == nil || !strings.Contains(err.Error(), "holds ${") {
		t.Errorf("a folder path with ${: %v\n%s", err, got)
	}
}

func TestAssignSessionPortsNeverCollide(t *testing.T) {
	folder := []string{"5173:5173", "8080:80"}
	// A kernel that offers the lowest port from 40000 up not taken, and
	// the folder's own 5173 first of all.
	offered := []int{}
	free := func(_, _ string, taken map[int]bool) (int, error) {
		if !taken[5173] {
			return 5173, nil
		}
		for p := 40000; ; p++ {
			if !taken[p] {
				offered = append(offered, p)
				return p, nil
			}
		}
	}
	var all []Session
	seen := map[string]string{}
	for _, name := range []string{"a", "b", "c"} {
		s := Session{Name: name}
		if _, err := AssignSessionPorts(&s, folder, all, free); err != nil {
			t.Fatal(err)
		}
		for from, to := range s.Ports {
			host := strings.SplitN(to, ":", 2)[0]
			if prev, dup := seen[host]; dup || host == "5173" || host == "8080" {
				t.Errorf("session %s got host port %s for %s (also %s)", name, host, from, prev)
			}
			seen[host] = name + " " + from
		}
		all = append(all, s)
	}
	if len(seen) != 6 {
		t.Errorf("want 6 distinct host ports, got %v", seen)
	}
	// Assigned ports stay; only a new port of the folder gets one.
	s := all[0]
	before := s.Ports["5173:5173"]
	changed, err := AssignSessionPorts(&s, append(folder, "3000:3000"), all[1:], free)
	if err != nil || !changed || s.Ports["5173:5173"] != before || s.Ports["3000:3000"] == "" {
		t.Errorf("reassign: changed %v err %v ports %v", changed, err, s.Ports)
	}
}

func TestSessionOfConf(t *testing.T) {
	for rel, want := range map[string]string{".asb/sessions/one/sandbox.yaml": "one", "./.asb/sessions/a-b/sandbox.yaml": "a-b"} {
		if got, ok := SessionOfConf(rel); !ok || got != want {
			t.Errorf("SessionOfConf(%q) = %q %v", rel, got, ok)
		}
	}
	for _, rel := range []string{"sandbox.yaml", ".asb/sessions/../x/sandbox.yaml", ".asb/sessions/one/other.yaml", "/tmp/evil.yaml", ".asb/sessions/One/sandbox.yaml"} {
		if _, ok := SessionOfConf(rel); ok {
			t.Errorf("SessionOfConf(%q) accepted", rel)
		}
	}
}

// A session record that arrived with the folder (committed in a clone) has
// no .git folder in its checkout, which git cannot carry: it is no session.
func TestSessionsIgnoresARecordWithoutItsCheckout(t *testing.T) {
	dir := t.TempDir()
	p := schema.SessionPathsOf("evil")
	rec := "name: evil\nagent: opencode\nbranch: asb/evil\nbase: main\n"
	must(t, os.MkdirAll(filepath.Join(dir, p.Workspace), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, p.Record), []byte(rec), 0o644))
	got, err := Sessions(dir)
	if err != nil || len(got) != 0 {
		t.Errorf("Sessions = %v, %v; want none", got, err)
	}
	if _, err := FindSession(dir, "evil"); err == nil || !strings.Contains(err.Error(), `no session "evil"`) {
		t.Errorf("FindSession: %v", err)
	}
	if _, err := FindSession(dir, "../evil"); err == nil || !strings.Contains(err.Error(), "not a valid session name") {
		t.Errorf("FindSession(../evil): %v", err)
	}
	// A checkout whose .git its VM made a gitdir: file is still a session,
	// so that asb session rm can end it; asb reads none of it
	// (HostRepo.Import refuses it: hostile_vm_gitdir.txtar).
	must(t, os.WriteFile(filepath.Join(dir, p.Workspace, ".git"), []byte("gitdir: /etc\n"), 0o644))
	if got, err := Sessions(dir); err != nil || len(got) != 1 {
		t.Errorf("a checkout with a .git file: Sessions = %v, %v; want the session", got, err)
	}
}

func TestSessionRecordChecked(t *testing.T) {
	good := Session{Name: "one", Agent: "opencode", Branch: "asb/one", HomeVolume: "p-1-opencode-one-20260101-000000",
		Ports: map[string]string{"5173:5173": "40000:5173"}}
	if err := good.check("one"); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(*Session){
		"other name":   func(s *Session) { s.Name = "two" },
		"other branch": func(s *Session) { s.Branch = "main" },
		"bad agent":    func(s *Session) { s.Agent = "../x" },
		"bad volume":   func(s *Session) { s.HomeVolume = "x y" },
		"guest port":   func(s *Session) { s.Ports = map[string]string{"5173:5173": "40000:22"} },
		"bind":         func(s *Session) { s.Ports = map[string]string{"5173:5173": "0.0.0.0:40000:5173"} },
	} {
		s := good
		mut(&s)
		if err := s.check("one"); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// SessionGone: gone when the folder holds no such session; a session whose
// record asb cannot read is not (prune keeps what it cannot judge).
func TestSessionGone(t *testing.T) {
	dir := t.TempDir()
	if !SessionGone(dir, "one") {
		t.Error("a folder without session one: not gone")
	}
	p := schema.SessionPathsOf("one")
	must(t, os.MkdirAll(filepath.Join(dir, p.Workspace, ".git"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, p.Record), []byte("name: [\n"), 0o644))
	if SessionGone(dir, "one") {
		t.Error("a session with a damaged record: gone")
	}
	if SessionGone(dir, "../x") || SessionGone(t.TempDir()+"/missing", "one") {
		t.Error("a bad name or a missing folder: gone")
	}
}
