package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/testkit/testenv"
	"github.com/agents-sandbox/asb/schema"
)

// TestRealMSBLimits: the real msb takes a folder made with every limit
// (asb init --idle-timeout … --root-disk … --tmp-size … --workspace-quota …
// --container-disk …) and records each where asb meant it: msb inspect of
// the VM (Starting, where the host cannot boot) shows them.
func TestRealMSBLimits(t *testing.T) {
	start := time.Now()
	defer func() { t.Logf("TestRealMSBLimits: %v", time.Since(start).Round(time.Millisecond)) }()
	msb := testenv.MSB(t)
	podman := testenv.Podman(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	o := newOuterWith(t, ctx, func(opts *schema.InitOptions) {
		opts.IdleTimeout, opts.RootDisk, opts.TmpSize, opts.WorkspaceQuota, opts.ContainerDisk = "45m", "16G", "1G", "20G", "12G"
	})
	env := testenv.MSBEnv(t)
	msbHome := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "MSB_HOME="); ok {
			msbHome = v
		}
	}
	quoted := make([]string, len(podman))
	for i, a := range podman {
		quoted[i] = generator.ShellQuote(a)
	}
	env = testenv.WithEnv(env, "OPENCODE_API_KEY="+canaryOpenCode, "GITHUB_TOKEN="+canaryGitHub)
	overrides := map[string]string{"ASB": asbStub(t), "BUILDER": strings.Join(quoted, " "),
		"BUILD_ARGS": strings.Join(testenv.PodmanBuildArgs(), " ")}
	vm := o.vars["VM"]
	t.Cleanup(func() {
		_, _, _ = testenv.RunErr(context.Background(), o.dir, env, nil, msb, "remove", "--force", "--quiet", vm)
	})
	for _, task := range []string{"image:build", "image:load", "home:create"} {
		if _, err := o.task(t, ctx, task, env, overrides); err != nil {
			t.Fatal(err)
		}
	}
	raw := bootAndInspect(t, ctx, o, env, overrides, msb, msbHome, vm)
	var rec struct {
		Config struct {
			Lifecycle struct {
				IdleTimeoutSecs *int64 `json:"idle_timeout_secs"`
				MaxDurationSecs *int64 `json:"max_duration_secs"`
			} `json:"lifecycle"`
			Image struct {
				Oci struct {
					RootDisk struct {
						Kind    string `json:"kind"`
						SizeMiB int64  `json:"size_mib"`
					} `json:"root_disk"`
				} `json:"Oci"`
			} `json:"image"`
			Mounts []struct {
				Type     string `json:"type"`
				Guest    string `json:"guest"`
				SizeMiB  *int64 `json:"size_mib"`
				QuotaMiB *int64 `json:"quota_mib"`
				Storage  struct {
					Kind        string `json:"kind"`
					CapacityMiB int64  `json:"capacity_mib"`
				} `json:"storage"`
			} `json:"mounts"`
		} `json:"config"`
	}
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatalf("msb inspect --format json: %v\n%s", err, raw)
	}
	c := rec.Config
	if got := c.Lifecycle.IdleTimeoutSecs; got == nil || *got != 45*60 {
		t.Errorf("idle_timeout_secs = %v, want 2700\n%s", deref(got), raw)
	}
	if c.Lifecycle.MaxDurationSecs != nil {
		t.Errorf("max_duration_secs = %d, want none (asb sets no max_duration by default)", *c.Lifecycle.MaxDurationSecs)
	}
	if c.Image.Oci.RootDisk.SizeMiB != 16384 {
		t.Errorf("root disk = %+v, want 16384 MiB", c.Image.Oci.RootDisk)
	}
	var seen []string
	for _, m := range c.Mounts {
		seen = append(seen, fmt.Sprintf("%s %s size=%s quota=%s disk=%d", m.Type, m.Guest, deref(m.SizeMiB), deref(m.QuotaMiB), m.Storage.CapacityMiB))
	}
	for _, want := range []string{"Tmpfs /tmp size=1024 ", "Bind /workspace size=none quota=20480 ", "/var/lib/containers size=none quota=none disk=12288"} {
		if !slices.ContainsFunc(seen, func(s string) bool { return strings.Contains(s, want) }) {
			t.Errorf("no mount like %q in:\n  %s", want, strings.Join(seen, "\n  "))
		}
	}
}

func deref(p *int64) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprint(*p)
}
