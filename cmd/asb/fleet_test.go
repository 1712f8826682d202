package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/cmd/asb/internal/root"
	"github.com/agents-sandbox/asb/host"
	"github.com/agents-sandbox/asb/internal/testkit/fakes"
)

// fleetEnv is a machine with the stand-in msb on PATH and these outer
// folders' VMs, volumes and images, made with the stand-in as vm:create
// makes them (the labels of the Taskfile's msb create line):
//
//	fa  exists  own VM running, session s1 running, s2 stopped
//	fb  exists  own VM stopped
//	fc  gone    own VM stopped, session s1 stopped
//	fd  gone    own VM running
//
// plus a VM, a volume and an image that are not asb's.
type fleetEnv struct {
	t    *testing.T
	tmp  string
	home string // MSB_HOME
}

func newFleetEnv(t *testing.T, version string) *fleetEnv {
	t.Helper()
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin")
	if err := fakes.Link(fakeBinary(t), bin); err != nil {
		t.Fatal(err)
	}
	e := &fleetEnv{t: t, tmp: tmp, home: filepath.Join(tmp, "msb-home")}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv(fakes.StateEnv, filepath.Join(tmp, "state"))
	t.Setenv(fakes.VersionEnv, version)
	t.Setenv(host.MSBCacheEnv, filepath.Join(tmp, "msb-version.json"))
	t.Setenv("MSB_HOME", e.home)
	t.Setenv("ASB_BUILDER", "podman")
	if err := os.WriteFile(filepath.Join(tmp, "sandbox.yaml"), []byte("cpus: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, f := range []string{"fa", "fb", "fc", "fd"} {
		e.folder(f, 1000*(i+1))
	}
	e.vm("fa", "", "")
	e.vm("fa", "s1", "")
	e.vm("fa", "s2", "2026-01-01T00:00:00Z")
	e.vm("fb", "", "")
	e.vm("fc", "", "")
	e.vm("fc", "s1", "")
	e.vm("fd", "", "")
	e.msb("FAKE-IMAGE other:1 d-other 3000", "load", "--tag", "other:1")
	e.tool("podman", "a base", "import", "-", "localhost/debian:trixie-slim")
	e.msb("", "volume", "create", "other-vol")
	e.msb("", "create", "other:1", "--name", "other-vm", "--conf", "sandbox.yaml")
	for _, vm := range []string{"fa-12345678-opencode-s2", "fb-12345678-opencode", "fc-12345678-opencode", "fc-12345678-opencode-s1", "other-vm"} {
		e.msb("", "stop", vm)
	}
	for _, gone := range []string{"fc", "fd"} {
		if err := os.RemoveAll(filepath.Join(tmp, gone)); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

var fakeOnce struct {
	sync.Once
	path string
	err  error
}

// fakeBinary is the stand-in, built once for these tests: a small program
// starts faster than this test binary, and the fleet calls msb often.
func fakeBinary(t *testing.T) string {
	t.Helper()
	fakeOnce.Do(func() {
		dir, err := os.MkdirTemp("", "asb-fleet-fake-")
		if err != nil {
			fakeOnce.err = err
			return
		}
		fakeOnce.path, fakeOnce.err = fakes.Build(dir)
	})
	if fakeOnce.err != nil {
		t.Fatal(fakeOnce.err)
	}
	return fakeOnce.path
}

// removeFakeBinary deletes fakeBinary's build, when there is one.
func removeFakeBinary() {
	if fakeOnce.path != "" {
		_ = os.RemoveAll(filepath.Dir(fakeOnce.path))
	}
}

// folder makes an outer folder's image (under the builder's tag too, as a
// docker tar brings it) and home volume.
func (e *fleetEnv) folder(name string, size int) {
	if err := os.MkdirAll(filepath.Join(e.tmp, name), 0o755); err != nil {
		e.t.Fatal(err)
	}
	slug := name + "-12345678"
	e.msb("FAKE-IMAGE agents-sandbox/runner-"+slug+":opencode-latest d-"+name+" "+strconv.Itoa(size),
		"load", "--tag", slug+":opencode-latest")
	e.msb("", "volume", "create", slug+"-opencode-20260101-000000")
	e.tool("podman", "rootfs of "+name, "import", "-", "agents-sandbox/runner-"+slug+":opencode-latest")
}

func (e *fleetEnv) vm(folder, session, created string) {
	slug := folder + "-12345678"
	name := slug + "-opencode"
	if session != "" {
		name += "-" + session
	}
	e.t.Setenv(fakes.NowEnv, created)
	e.msb("", "create", slug+":opencode-latest", "--name", name, "--conf", "sandbox.yaml",
		"--label", "asb.folder="+filepath.Join(e.tmp, folder), "--label", "asb.session="+session,
		"--label", "asb.agent=opencode", "--label", "asb.home="+slug+"-opencode-20260101-000000")
	e.t.Setenv(fakes.NowEnv, "")
}

func (e *fleetEnv) msb(stdin string, args ...string) string {
	e.t.Helper()
	return e.tool("msb", stdin, args...)
}

func (e *fleetEnv) tool(name, stdin string, args ...string) string {
	e.t.Helper()
	c := exec.Command(name, args...)
	c.Dir = e.tmp
	c.Stdin = strings.NewReader(stdin)
	out, err := c.CombinedOutput()
	if err != nil {
		e.t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

// asb runs asb in process from a folder unrelated to the fleet.
func (e *fleetEnv) asb(args ...string) (stdout, stderr string, code int) {
	var out, errOut bytes.Buffer
	f := root.NewFactory(&cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	code = root.Run(context.Background(), args, f)
	return out.String(), errOut.String(), code
}

func (e *fleetEnv) asbJSON(v any, args ...string) {
	e.t.Helper()
	out, errOut, code := e.asb(args...)
	if code != 0 {
		e.t.Fatalf("asb %v: exit %d\n%s%s", args, code, out, errOut)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		e.t.Fatalf("asb %v: %v\n%s", args, err, out)
	}
}

type lsRow struct {
	Folder     string `json:"folder"`
	Session    string `json:"session"`
	Agent      string `json:"agent"`
	FolderGone bool   `json:"folder_gone"`
	VM         string `json:"vm"`
	Status     string `json:"status"`
	DiskBytes  int64  `json:"disk_bytes"`
}

func (e *fleetEnv) ls(args ...string) []string {
	var rows []lsRow
	e.asbJSON(&rows, append([]string{"ls", "--format", "json"}, args...)...)
	var got []string
	for _, r := range rows {
		folder := strings.TrimPrefix(r.Folder, e.tmp+"/")
		if r.FolderGone {
			folder += "(gone)"
		}
		if r.Agent != "opencode" || r.DiskBytes < fakes.VMDiskBytes {
			e.t.Errorf("row %+v: agent or disk wrong", r)
		}
		got = append(got, folder+"/"+r.Session+":"+r.Status)
	}
	return got
}

func TestLsListsEveryFolderAndSession(t *testing.T) {
	e := newFleetEnv(t, "0.7.2")
	want := []string{"fa/:Running", "fa/s1:Running"}
	if got := e.ls(); !slices.Equal(got, want) {
		t.Errorf("asb ls = %q, want %q (live VMs of folders that exist)", got, want)
	}
	want = []string{"fa/:Running", "fa/s1:Running", "fa/s2:Stopped", "fb/:Stopped",
		"fc(gone)/:Stopped", "fc(gone)/s1:Stopped", "fd(gone)/:Running"}
	if got := e.ls("--all"); !slices.Equal(got, want) {
		t.Errorf("asb ls --all = %q, want %q", got, want)
	}
	out, _, code := e.asb("ls", "--all")
	if code != 0 || !strings.Contains(out, filepath.Join(e.tmp, "fc")+" (gone)") || strings.Contains(out, "other-vm") {
		t.Errorf("asb ls --all (table), exit %d:\n%s", code, out)
	}
}

type removal struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
	Why  string `json:"why"`
}

func (e *fleetEnv) plan(args ...string) []string {
	var rs []removal
	e.asbJSON(&rs, append([]string{"prune", "--format", "json"}, args...)...)
	var got []string
	for _, r := range rs {
		got = append(got, r.Kind+" "+r.Name)
	}
	return got
}

func TestPruneRemovesExactlyTheStoppedAndOrphaned(t *testing.T) {
	e := newFleetEnv(t, "0.7.2")
	want := []string{
		"vm fa-12345678-opencode-s2", "vm fb-12345678-opencode", "vm fc-12345678-opencode", "vm fc-12345678-opencode-s1",
		// fc is gone; fb's home volume stays (its folder exists), fd's too
		// (a running VM mounts it).
		"volume fc-12345678-opencode-20260101-000000",
		"image agents-sandbox/runner-fb-12345678:opencode-latest", "image agents-sandbox/runner-fc-12345678:opencode-latest",
		"image docker.io/library/fb-12345678:opencode-latest", "image docker.io/library/fc-12345678:opencode-latest",
	}
	if got := e.plan("--dry-run"); !slices.Equal(got, want) {
		t.Errorf("asb prune --dry-run =\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if got := e.plan("--dry-run", "--older-than", "7d"); !slices.Equal(got, []string{"vm fa-12345678-opencode-s2"}) {
		t.Errorf("--older-than 7d: %q, want only the VM made in January", got)
	}
	named := e.plan("--dry-run", "--volume", "fb-12345678-opencode-20260101-000000")
	if !slices.Contains(named, "volume fb-12345678-opencode-20260101-000000") || len(named) != len(want)+1 {
		t.Errorf("--volume of a folder that exists: %q", named)
	}
	if _, errOut, code := e.asb("prune", "--volume", "fa-12345678-opencode-20260101-000000", "--dry-run"); code == 0 || !strings.Contains(errOut, "a VM that stays mounts it") {
		t.Errorf("--volume of a volume a running VM mounts: exit %d, %s", code, errOut)
	}
	// Not at a terminal and no --yes: nothing is removed.
	before := e.msb("", "ls", "-q")
	if _, errOut, code := e.asb("prune"); code == 0 || !strings.Contains(errOut, "pass --yes") {
		t.Errorf("asb prune with no one to ask: exit %d, %s", code, errOut)
	}
	if after := e.msb("", "ls", "-q"); after != before {
		t.Errorf("asb prune removed without asking:\n%s\nthen\n%s", before, after)
	}
	out, errOut, code := e.asb("prune", "--yes")
	if code != 0 || !strings.Contains(out, "Removed 9.") {
		t.Fatalf("asb prune --yes: exit %d\n%s%s", code, out, errOut)
	}
	if got := e.ls("--all"); !slices.Equal(got, []string{"fa/:Running", "fa/s1:Running", "fd(gone)/:Running"}) {
		t.Errorf("after prune, asb ls --all = %q", got)
	}
	if vols := e.msb("", "volume", "ls", "-q"); strings.Contains(vols, "fc-") || !strings.Contains(vols, "fb-") || !strings.Contains(vols, "other-vol") {
		t.Errorf("volumes after prune: %s", vols)
	}
	if got := e.plan("--dry-run"); len(got) != 0 {
		t.Errorf("a second prune finds %q", got)
	}
	if calls := e.msb("", "ls", "-q"); !strings.Contains(calls, "other-vm") {
		t.Errorf("prune removed a VM that is not asb's: %s", calls)
	}
}

type dfReport struct {
	Rows []struct {
		Folder string `json:"folder"`
		Kind   string `json:"kind"`
		Count  int    `json:"count"`
		Bytes  int64  `json:"bytes"`
	} `json:"rows"`
	Total int64 `json:"total_bytes"`
}

// asb df's total is what du says of msb's VM disks and volumes plus what
// msb image ls says of its images (a digest once); each row adds up.
func TestDfTotalsMatchTheTools(t *testing.T) {
	e := newFleetEnv(t, "0.7.2")
	blob := make([]byte, 300_000)
	for i := range blob {
		blob[i] = byte(i)
	}
	if err := os.WriteFile(filepath.Join(e.home, "volumes", "fa-12345678-opencode-20260101-000000", "blob"), blob, 0o644); err != nil {
		t.Fatal(err)
	}
	var rep dfReport
	e.asbJSON(&rep, "df", "--format", "json")
	want := du(t, filepath.Join(e.home, "sandboxes")) + du(t, filepath.Join(e.home, "volumes"))
	var imgs []struct {
		Digest string `json:"digest"`
		Size   int64  `json:"size_bytes"`
	}
	if err := json.Unmarshal([]byte(e.msb("", "image", "ls", "--format", "json")), &imgs); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, img := range imgs {
		if !seen[img.Digest] {
			want += img.Size
			seen[img.Digest] = true
		}
	}
	var built []struct {
		Size int64 `json:"Size"`
	}
	if err := json.Unmarshal([]byte(e.tool("podman", "", "images", "--format", "json")), &built); err != nil {
		t.Fatal(err)
	}
	for _, b := range built {
		want += b.Size
	}
	var sum int64
	byKey := map[string]int64{}
	for _, r := range rep.Rows {
		sum += r.Bytes
		byKey[strings.TrimPrefix(r.Folder, e.tmp+"/")+" "+r.Kind] = r.Bytes
	}
	if rep.Total != want || sum != rep.Total {
		t.Errorf("asb df total %d, rows add up to %d; du and msb image ls say %d", rep.Total, sum, want)
	}
	if byKey["fa home volumes"] < 300_000 || byKey["fb msb images"] != 2000 || byKey["(not asb's) msb images"] != 3000 ||
		byKey["fb builder images"] != fakes.BuilderImageBytes || byKey["(not asb's) builder images"] != fakes.BuilderImageBytes {
		t.Errorf("rows: %v", byKey)
	}
	out, _, _ := e.asb("df")
	if !strings.Contains(out, "TOTAL") || strings.Contains(out, "msb df") {
		t.Errorf("asb df on msb 0.7.2 (which has no msb df):\n%s", out)
	}
}

// du is what du -sB1 says of each entry in dir, summed (asb measures each
// VM's and volume's folder, not the folder holding them).
func du(t *testing.T, dir string) int64 {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, en := range entries {
		out, err := exec.Command("du", "-sB1", filepath.Join(dir, en.Name())).Output()
		if err != nil {
			t.Fatalf("du %s: %v", en.Name(), err)
		}
		n, err := strconv.ParseInt(strings.Fields(string(out))[0], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		total += n
	}
	return total
}

// Where msb has its own df and prune (0.7.7+), asb uses them as well; on
// 0.7.2 it never calls them (the stand-in refuses the words, as msb does).
func TestMsbDfAndPruneUsedWhereTheReleaseHasThem(t *testing.T) {
	e := newFleetEnv(t, "0.7.7")
	out, errOut, code := e.asb("df")
	if code != 0 || !strings.Contains(out, "msb df (msb 0.7.7's own report") {
		t.Errorf("asb df on 0.7.7: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = e.asb("prune", "--dry-run")
	if code != 0 || !strings.Contains(out, "fake msb prune --dry-run") {
		t.Errorf("asb prune --dry-run on 0.7.7: exit %d\n%s%s", code, out, errOut)
	}
}
