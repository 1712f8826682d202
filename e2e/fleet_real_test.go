package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/testkit/testenv"
	"github.com/agents-sandbox/asb/runner"
	"github.com/agents-sandbox/asb/templates"
)

// TestRealMsbFleetLabels runs vm:create's msb create line, labels and
// all, against the real msb (a folder whose path has a space; a tiny
// image; no boot waited for, as the other real-msb tests) and checks that
// msb keeps the labels as asb wrote them and that asb's reading of msb's
// listings (ls, inspect, volume ls, image ls in msb's JSON) finds the VM,
// its home volume and its image under that folder.
func TestRealMsbFleetLabels(t *testing.T) {
	msb := testenv.MSB(t)
	env := testenv.MSBEnv(t)
	home := envOf(env, "MSB_HOME")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	o := renderedOuter(t, ctx, "fleet e2e")
	vm, vol := o.vars["VM"], o.vars["HOME_VOLUME"]
	overrides := map[string]string{"ASB": asbStub(t), "IMAGE": loadTinyImage(t, ctx, msb, env)}
	testenv.Run(t, ctx, o.dir, env, msb, "volume", "create", "--quiet", vol)
	t.Cleanup(func() {
		_, _, _ = testenv.RunErr(context.Background(), o.dir, env, nil, msb, "remove", "--force", "--quiet", vm)
	})
	raw := bootAndInspect(t, ctx, o, env, overrides, msb, home, vm)
	var rec struct {
		Config struct {
			Labels map[string]string `json:"labels"`
		} `json:"config"`
	}
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{runner.LabelFolder: o.dir, runner.LabelSession: "", runner.LabelAgent: "opencode", runner.LabelHome: vol}
	for k, v := range want {
		if got, ok := rec.Config.Labels[k]; !ok || got != v {
			t.Errorf("msb recorded label %s = %q (present %v), want %q; all: %v", k, got, ok, v, rec.Config.Labels)
		}
	}
	t.Setenv("MSB_HOME", home) // runner.MSB runs msb in asb's own environment
	f, err := runner.LoadFleet(ctx, runner.MSB{Bin: msb}, nil)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(f.VMs, func(v runner.FleetVM) bool { return v.Name == vm })
	if i < 0 || f.VMs[i].Folder != o.dir || f.VMs[i].FolderGone || f.VMs[i].HomeVolume != vol || f.VMs[i].Created.IsZero() {
		t.Fatalf("asb's reading of msb's listing: %+v", f.VMs)
	}
	v := slices.IndexFunc(f.Volumes, func(v runner.FleetVolume) bool { return v.Name == vol })
	if v < 0 || f.Volumes[v].Folder != o.dir || !slices.Contains(f.Volumes[v].UsedBy, vm) {
		t.Errorf("the home volume: %+v", f.Volumes)
	}
	img := slices.IndexFunc(f.Images, func(im runner.FleetImage) bool { return slices.Contains(im.UsedBy, vm) })
	if img < 0 || f.Images[img].Folder != o.dir || f.Images[img].Bytes <= 0 {
		t.Errorf("the image: %+v", f.Images)
	}
	if plan := f.PrunePlan(runner.PruneOptions{Now: time.Now()}); !slices.ContainsFunc(plan, func(r runner.Removal) bool { return r.Name == vm }) ||
		slices.ContainsFunc(plan, func(r runner.Removal) bool { return r.Name == vol }) {
		t.Errorf("prune plan for the stopped VM of a folder that exists: %+v", plan)
	}
}

// renderedOuter is asb's outer folder for OpenCode, as asb init writes it,
// in a folder named name.
func renderedOuter(t *testing.T, ctx context.Context, name string) *outer {
	t.Helper()
	plan, err := generator.Render(templates.FS, generator.DefaultOptions("opencode", "e2e"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), name)
	if _, err := generator.Apply(ctx, dir, plan, generator.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "workspace"), 0o755); err != nil {
		t.Fatal(err)
	}
	o := &outer{dir: dir, vars: map[string]string{}, cmds: map[string][]string{}}
	o.readTaskfile(t)
	return o
}

// TestRealPodmanBuilderTotals: what asb df counts of the builder (its
// images, an image with a second name once, and its unnamed layers) is
// what podman images -a lists, each image once; podman 4.3's system df
// counts an image with two names twice, so it may only be larger.
func TestRealPodmanBuilderTotals(t *testing.T) {
	podman := testenv.Podman(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := func(stdin []byte, args ...string) string {
		t.Helper()
		out, stderr, err := testenv.RunErr(ctx, "", os.Environ(), stdin, append(slices.Clone(podman), args...)...)
		if err != nil {
			t.Fatalf("podman %v: %v\n%s", args, err, stderr)
		}
		return string(out)
	}
	run(tarOf(t, map[string]string{"etc/hostname": "a\n"}), "import", "-", "agents-sandbox/runner-x-12345678:opencode-latest")
	run(nil, "tag", "agents-sandbox/runner-x-12345678:opencode-latest", "localhost/other:1")
	run(tarOf(t, map[string]string{"etc/hostname": "b\n", "etc/motd": strings.Repeat("m", 50_000)}), "import", "-", "localhost/base:1")
	var f runner.Fleet
	if err := f.LoadBuilder(ctx, runner.Builder{Command: strings.Join(podman, " ")}); err != nil {
		t.Fatal(err)
	}
	got := f.BuilderCache
	for _, img := range f.BuilderImages {
		got += img.Bytes
	}
	var listed []struct {
		ID   string `json:"Id"`
		Size int64  `json:"Size"`
	}
	if err := json.Unmarshal([]byte(run(nil, "images", "-a", "--format", "json")), &listed); err != nil {
		t.Fatal(err)
	}
	var want int64
	once := map[string]bool{}
	for _, img := range listed {
		if !once[img.ID] {
			want += img.Size
			once[img.ID] = true
		}
	}
	var df int64 = -1
	for line := range strings.SplitSeq(run(nil, "system", "df", "--format", "{{.Type}}|{{.RawSize}}"), "\n") {
		if v, ok := strings.CutPrefix(line, "Images|"); ok {
			if df, _ = strconv.ParseInt(strings.TrimSpace(v), 10, 64); df <= 0 {
				t.Fatalf("podman system df: %q", line)
			}
		}
	}
	if got != want || len(once) != 2 || len(f.BuilderImages) != 3 || got > df {
		t.Errorf("asb counts %d bytes in %+v; podman images -a lists %d bytes in %d images; podman system df says %d",
			got, f.BuilderImages, want, len(once), df)
	}
}
