package kubeexport

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	extv1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/testkit/testenv"
	"github.com/agents-sandbox/asb/schema"
)

// Every limit with a counterpart in a pod is mapped: tmp-size to an
// in-memory emptyDir with its sizeLimit at /tmp, root-disk to the agent's
// ephemeral storage, workspace-quota to the workspace volume claim, with
// --storage-class on both claims; the others are named in the notes.
func TestLimitsAreMapped(t *testing.T) {
	crds := loadCRDs(t)
	o := generator.DefaultOptions("pi", "demo-pi")
	o.TmpSize, o.RootDisk, o.WorkspaceQuota, o.IdleTimeout, o.ContainerDisk = "512M", "6G", "3G", "45m", "2G"
	files, _, stderr := export(t, folder(t, o), "--storage-class", "fast-ssd")
	validateAll(t, crds, files)
	tmpl := template_(t, files, "demo-pi")
	spec := tmpl.Spec.PodTemplate.Spec
	var tmp *corev1.Volume
	for i, v := range spec.Volumes {
		if v.Name == tmpVolume {
			tmp = &spec.Volumes[i]
		}
	}
	if tmp == nil || tmp.EmptyDir == nil || tmp.EmptyDir.Medium != corev1.StorageMediumMemory || tmp.EmptyDir.SizeLimit.Cmp(resource.MustParse("512Mi")) != 0 {
		t.Fatalf("volumes %+v: want /tmp as an emptyDir in memory of 512Mi", spec.Volumes)
	}
	c := spec.Containers[0]
	if !hasMount(c.VolumeMounts, "/tmp", false) {
		t.Errorf("mounts %+v: no /tmp", c.VolumeMounts)
	}
	if q := c.Resources.Limits[corev1.ResourceEphemeralStorage]; q.Cmp(resource.MustParse("6Gi")) != 0 {
		t.Errorf("ephemeral storage limit %v, want 6Gi", q.String())
	}
	sizes := map[string]string{}
	for _, v := range tmpl.Spec.VolumeClaimTemplates {
		q := v.Spec.Resources.Requests[corev1.ResourceStorage]
		sizes[v.Name] = q.String()
		if v.Spec.StorageClassName == nil || *v.Spec.StorageClassName != "fast-ssd" {
			t.Errorf("claim %s: storage class %v, want fast-ssd", v.Name, v.Spec.StorageClassName)
		}
	}
	if sizes[workVolume] != "3Gi" || sizes[homeVolume] != volumeSize {
		t.Errorf("claim sizes %v: want the workspace quota 3Gi and home %s", sizes, volumeSize)
	}
	for _, want := range []string{"limit tmp-size 512M", "limit root-disk 6G", "limit workspace-quota 3G", "limit idle-timeout 45m: not exported", "limit container-disk 2G: not exported"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the notes lack %q:\n%s", want, stderr)
		}
	}
	var pool extv1.SandboxWarmPool
	mustUnmarshal(t, files["40-sandboxwarmpool-demo-pi.yaml"], &pool)
	if pool.Spec.UpdateStrategy == nil || pool.Spec.UpdateStrategy.Type != extv1.RecreateSandboxWarmPoolUpdateStrategyType {
		t.Errorf("pool update strategy %+v, want Recreate", pool.Spec.UpdateStrategy)
	}
}

// A session's claim names its own branch for the init container, which
// the template allows (Allowed: add, never change); the folder's own
// claim names none. Each claim retains itself on expiry.
func TestSessionsGetTheirOwnBranch(t *testing.T) {
	files, _, _ := export(t, folder(t, richOptions()), "--session", "alice")
	tmpl := template_(t, files, "demo-github")
	if tmpl.Spec.EnvVarsInjectionPolicy != extv1.EnvVarsInjectionPolicyAllowed {
		t.Errorf("envVarsInjectionPolicy %q, want Allowed", tmpl.Spec.EnvVarsInjectionPolicy)
	}
	for _, e := range tmpl.Spec.PodTemplate.Spec.InitContainers[0].Env {
		if e.Name == SessionBranchEnv {
			t.Errorf("the template sets %s: a claim could not set its own", SessionBranchEnv)
		}
	}
	var c extv1.SandboxClaim
	mustUnmarshal(t, files["50-sandboxclaim-demo-github-alice.yaml"], &c)
	if len(c.Spec.Env) != 1 || c.Spec.Env[0] != (extv1.EnvVar{Name: SessionBranchEnv, Value: "asb/alice", ContainerName: initContainer}) {
		t.Errorf("claim env %+v: want %s=asb/alice for %s", c.Spec.Env, SessionBranchEnv, initContainer)
	}
	if c.Spec.Lifecycle == nil || c.Spec.Lifecycle.ShutdownPolicy != extv1.ShutdownPolicyRetain {
		t.Errorf("claim lifecycle %+v, want shutdownPolicy Retain", c.Spec.Lifecycle)
	}
	files, _, _ = export(t, folder(t, richOptions()))
	var own extv1.SandboxClaim
	mustUnmarshal(t, files["50-sandboxclaim-demo-github.yaml"], &own)
	if len(own.Spec.Env) != 0 {
		t.Errorf("the folder's own claim sets %+v", own.Spec.Env)
	}
}

// A config file whose name a pod's volume cannot hold (..name) is refused
// at export with the rule, not left to the controller's events.
func TestConfigNamesThePodRefusesAreRefused(t *testing.T) {
	dir := folder(t, generator.DefaultOptions("opencode", "demo-oc"))
	if err := os.WriteFile(filepath.Join(dir, "opencode", "..data"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	approve(t, dir)
	var stderr bytes.Buffer
	code := Main([]string{"--dir", dir, "--image", "registry.example.com/a:1"}, &bytes.Buffer{}, &stderr, os.Getenv)
	if code != 1 || !strings.Contains(stderr.String(), `"..data" is not a path a pod's config volume may hold`) {
		t.Errorf("exit %d, %q: want the config file refused with the rule", code, stderr.String())
	}
}

// A project name the API server refuses (asb.yaml edited by hand) is
// refused with the rule asb init applies.
func TestProjectNameIsChecked(t *testing.T) {
	dir := folder(t, generator.DefaultOptions("pi", "demo-pi"))
	rec := filepath.Join(dir, "asb.yaml")
	b, _ := os.ReadFile(rec)
	if err := os.WriteFile(rec, bytes.Replace(b, []byte("name: demo-pi"), []byte("name: 1demo"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	Main([]string{"--dir", dir}, &bytes.Buffer{}, &stderr, os.Getenv)
	if !strings.Contains(stderr.String(), "starting with a letter and ending with a letter or digit") {
		t.Errorf("stderr %q: want the project name rule", stderr.String())
	}
}

func approve(t *testing.T, dir string) {
	t.Helper()
	testenv.Approve(t, dir)
}

// The one rule on project names (schema.ProjectName, which asb init
// applies) takes only names every exported object may carry: an RFC 1035
// label (the Service and host name a claim becomes), and so a DNS
// subdomain (every object's name) and a label value (part-of).
func TestProjectNameRuleIsTheAPIServers(t *testing.T) {
	for _, n := range []string{"a", "demo", "demo-1", "x-", "1demo", "-x", "Demo", "a_b", "a.b", strings.Repeat("a", 63), strings.Repeat("a", 64), "a--b", "z9"} {
		ours := schema.ProjectName(n) == nil
		theirs := len(validation.IsDNS1035Label(n)) == 0 && len(validation.IsDNS1123Subdomain(n)) == 0 && len(validation.IsValidLabelValue(n)) == 0
		if ours != theirs {
			t.Errorf("%q: asb init takes it %v, the API server %v", n, ours, theirs)
		}
	}
}
