package kubeexport

import (
	"bytes"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	extv1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"
	"sigs.k8s.io/yaml"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/templates"
)

// Every preset's folder exports resources the API server would take.
func TestEveryPresetValidatesAgainstTheCRDs(t *testing.T) {
	crds := loadCRDs(t)
	agents, err := generator.Agents(templates.FS)
	if err != nil || len(agents) < 5 {
		t.Fatalf("presets: %v %v", agents, err)
	}
	for _, a := range agents {
		t.Run(a, func(t *testing.T) {
			o := generator.DefaultOptions(a, "demo-"+a)
			files, stdout, stderr := export(t, folder(t, o))
			kinds := validateAll(t, crds, files)
			want := map[string]int{"ConfigMap": 1, "CiliumNetworkPolicy": 1, "SandboxTemplate": 1, "SandboxWarmPool": 1, "SandboxClaim": 1}
			if !maps.Equal(kinds, want) {
				t.Errorf("kinds %v, want %v", kinds, want)
			}
			tmpl := template_(t, files, "demo-"+a)
			agent, _ := generator.LoadAgent(templates.FS, a)
			c := tmpl.Spec.PodTemplate.Spec.Containers[0]
			if !slices.Equal(c.Command, keeper) || *tmpl.Spec.PodTemplate.Spec.SecurityContext.RunAsUser != devUID {
				t.Errorf("container %v as %d; want the keeper as dev", c.Command, *tmpl.Spec.PodTemplate.Spec.SecurityContext.RunAsUser)
			}
			if !strings.Contains(stderr, "kubectl exec -it POD -c agent -- "+shellWords(agent.Command)) {
				t.Errorf("the notes do not say how the agent %v is run:\n%s", agent.Command, stderr)
			}
			if !hasMount(c.VolumeMounts, agent.MountTarget, true) || !hasMount(c.VolumeMounts, "/home/dev", false) {
				t.Errorf("mounts %+v: want the config read-only at %s and home at /home/dev", c.VolumeMounts, agent.MountTarget)
			}
			checkPodRefs(t, tmpl, files["10-configmap-demo-"+a+"-agent-config.yaml"])
			noCanary(t, files, stdout, stderr)
		})
	}
}

// checkPodRefs checks what the CRD schema cannot and the API server's core
// validation would: every mount names a volume (of the pod or a claim
// template), and every ConfigMap item names a key the ConfigMap has.
func checkPodRefs(t *testing.T, tmpl *extv1.SandboxTemplate, cmYAML []byte) {
	t.Helper()
	var cm corev1.ConfigMap
	mustUnmarshal(t, cmYAML, &cm)
	vols := map[string]bool{}
	for _, v := range tmpl.Spec.VolumeClaimTemplates {
		vols[v.Name] = true
	}
	spec := tmpl.Spec.PodTemplate.Spec
	for _, v := range spec.Volumes {
		vols[v.Name] = true
		if v.ConfigMap == nil || v.ConfigMap.Name != cm.Name {
			t.Errorf("volume %s is not the ConfigMap %s", v.Name, cm.Name)
			continue
		}
		for _, it := range v.ConfigMap.Items {
			if _, ok := cm.Data[it.Key]; !ok {
				if _, ok := cm.BinaryData[it.Key]; !ok {
					t.Errorf("volume %s: item %s names no key of the ConfigMap", v.Name, it.Key)
				}
			}
		}
	}
	for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
		for _, m := range c.VolumeMounts {
			if !vols[m.Name] {
				t.Errorf("container %s mounts %s, which is no volume", c.Name, m.Name)
			}
		}
	}
}

// Two sessions are two claims of one template (through its warm pool),
// with secrets as references, ports, the allow list as names and the
// workspace cloned at the recorded commit; no secret value anywhere.
func TestSessionsSecretsPortsAllowList(t *testing.T) {
	crds := loadCRDs(t)
	dir := folder(t, richOptions())
	t.Setenv("GITHUB_TOKEN", canary) // exported in the shell, as secrets.env's
	files, stdout, stderr := export(t, dir, "--session", "alice", "--session", "bob", "--runtime-class", "kata")
	kinds := validateAll(t, crds, files)
	if kinds["SandboxClaim"] != 2 || kinds["SandboxTemplate"] != 1 || kinds["SandboxWarmPool"] != 1 {
		t.Fatalf("kinds %v: want two claims of one template and pool", kinds)
	}
	for _, s := range []string{"alice", "bob"} {
		var c extv1.SandboxClaim
		mustUnmarshal(t, files["50-sandboxclaim-demo-github-"+s+".yaml"], &c)
		if c.Spec.WarmPoolRef.Name != "demo-github" {
			t.Errorf("claim %s uses pool %q", s, c.Spec.WarmPoolRef.Name)
		}
	}
	tmpl := template_(t, files, "demo-github")
	spec := tmpl.Spec.PodTemplate.Spec
	if spec.RuntimeClassName == nil || *spec.RuntimeClassName != "kata" || *spec.AutomountServiceAccountToken {
		t.Errorf("runtime class %v, service account token %v: want kata, none", spec.RuntimeClassName, *spec.AutomountServiceAccountToken)
	}
	refs := map[string]string{}
	for _, e := range spec.Containers[0].Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			refs[e.Name] = e.ValueFrom.SecretKeyRef.Name + "/" + e.ValueFrom.SecretKeyRef.Key
		} else if e.Value != "" && strings.Contains(e.Name, "TOKEN") {
			t.Errorf("env %s has a value", e.Name)
		}
	}
	if refs["GITHUB_TOKEN"] != "demo-github-secrets/GITHUB_TOKEN" || refs["OPENCODE_API_KEY"] != "demo-github-secrets/OPENCODE_API_KEY" || refs["ANTHROPIC_API_KEY"] == "" {
		t.Errorf("secret references %v", refs)
	}
	if p := spec.Containers[0].Ports; len(p) != 2 || p[0].ContainerPort != 5173 || p[1].Protocol != "UDP" {
		t.Errorf("ports %+v", p)
	}
	if len(spec.InitContainers) != 1 || !slices.Contains(envValues(spec.InitContainers[0].Env), origin.Commit) {
		t.Errorf("init containers %+v: want the clone at %s", spec.InitContainers, origin.Commit)
	}
	if len(spec.Volumes) != 2 {
		t.Errorf("volumes %+v: want a config volume for each agent", spec.Volumes)
	}
	cnp := string(files["20-ciliumnetworkpolicy-demo-github-egress.yaml"])
	for _, h := range []string{"matchName: registry.npmjs.org", "matchPattern: '*.npmjs.org'", "matchName: api.anthropic.com"} {
		if !strings.Contains(cnp, h) {
			t.Errorf("the Cilium policy has no %q:\n%s", h, cnp)
		}
	}
	if !strings.Contains(stderr, "enforced only by Cilium") || !strings.Contains(string(files[NotesFile]), "create the Secret demo-github-secrets") {
		t.Errorf("the notes do not say where the list is enforced and which Secret to create:\n%s", stderr)
	}
	noCanary(t, files, stdout, stderr)
}

// Without -o the resources are one stream for kubectl apply -f -, the
// same bytes as the files.
func TestStdoutIsOneStream(t *testing.T) {
	dir := folder(t, generator.DefaultOptions("pi", "demo-pi"))
	files, _, _ := export(t, dir)
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"--dir", dir, "--image", "registry.example.com/team/demo:1"}, &stdout, &stderr, os.Getenv); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	docs := strings.Split(stdout.String(), "---\n")
	if len(docs) != len(files)-1 { // NOTES.txt is not a resource
		t.Fatalf("%d documents on stdout, %d files", len(docs), len(files)-1)
	}
	for _, d := range docs {
		found := false
		for _, b := range files {
			found = found || string(b) == d
		}
		if !found {
			t.Errorf("stdout document is no file:\n%s", d)
		}
	}
}

func TestBadInputIsOneMessage(t *testing.T) {
	dir := folder(t, generator.DefaultOptions("pi", "demo-pi"))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--session", "Bad_Name"}, `--session: "Bad_Name" is not a valid session name`},
		{[]string{"--session", "a", "--session", "a"}, "given twice"},
		{[]string{"--session", strings.Repeat("s", 30)}, "longer than 24"},
		{[]string{"--egress", "calico"}, `--egress "calico"`},
		{[]string{"--storage-class", "Fast SSD"}, `--storage-class "Fast SSD"`},
		{[]string{"--runtime-class", "Kata Containers"}, "--runtime-class"},
		{[]string{"--image", "Not An Image"}, "--image"},
	} {
		var stdout, stderr bytes.Buffer
		code := Main(append([]string{"--dir", dir}, tc.args...), &stdout, &stderr, os.Getenv)
		if code != 1 || !strings.Contains(stderr.String(), tc.want) || stdout.Len() > 0 {
			t.Errorf("%v: exit %d, stderr %q, stdout %d bytes; want 1 and %q", tc.args, code, stderr.String(), stdout.Len(), tc.want)
		}
	}
	var stderr bytes.Buffer
	if code := Main(nil, &bytes.Buffer{}, &stderr, os.Getenv); code != 2 || !strings.Contains(stderr.String(), "asb export kubernetes") {
		t.Errorf("no --dir: exit %d, %q", code, stderr.String())
	}
}

// A folder whose files differ from asb's render is exported only once
// approved, as asb task runs it.
func TestUnapprovedFolderIsRefused(t *testing.T) {
	dir := folder(t, generator.DefaultOptions("pi", "demo-pi"))
	f, err := os.OpenFile(dir+"/sandbox.yaml", os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString("env:\n  EDITED: by hand\n")
	f.Close()
	var stderr bytes.Buffer
	if code := Main([]string{"--dir", dir}, &bytes.Buffer{}, &stderr, os.Getenv); code != 1 || !strings.Contains(stderr.String(), "asb trust") {
		t.Errorf("exit %d, %q: want a refusal naming asb trust", code, stderr.String())
	}
}

func template_(t *testing.T, files map[string][]byte, name string) *extv1.SandboxTemplate {
	t.Helper()
	var tmpl extv1.SandboxTemplate
	mustUnmarshal(t, files["30-sandboxtemplate-"+name+".yaml"], &tmpl)
	return &tmpl
}

func mustUnmarshal(t *testing.T, b []byte, v any) {
	t.Helper()
	if len(b) == 0 {
		t.Fatal("no such file in the export")
	}
	if err := yaml.UnmarshalStrict(b, v); err != nil {
		t.Fatal(err)
	}
}

func hasMount(ms []corev1.VolumeMount, path string, ro bool) bool {
	return slices.ContainsFunc(ms, func(m corev1.VolumeMount) bool { return m.MountPath == path && m.ReadOnly == ro })
}

func envValues(env []corev1.EnvVar) []string {
	var out []string
	for _, e := range env {
		out = append(out, e.Value)
	}
	return out
}

// The template's networkPolicy is never left out: without it the
// controller applies its default, which lets the pod reach the whole
// public internet. --network none is a policy with no rule (deny all).
func TestEveryNetworkPolicyIsWritten(t *testing.T) {
	for _, nw := range []string{"none", "public", "allow", "balanced"} {
		t.Run(nw, func(t *testing.T) {
			o := generator.DefaultOptions("pi", "demo-pi")
			o.Network = nw
			if nw == "public" || nw == "none" {
				o.Allow = nil
			}
			files, _, _ := export(t, folder(t, o))
			tmpl := template_(t, files, "demo-pi")
			np := tmpl.Spec.NetworkPolicy
			if np == nil || !strings.Contains(string(files["30-sandboxtemplate-demo-pi.yaml"]), "networkPolicy:") {
				t.Fatalf("--network %s: the template has no networkPolicy; the controller's default would allow the internet", nw)
			}
			if len(np.Ingress) != 0 {
				t.Errorf("--network %s: ingress %+v, want none", nw, np.Ingress)
			}
			switch nw {
			case "none":
				if len(np.Egress) != 0 {
					t.Errorf("--network none: egress %+v, want none", np.Egress)
				}
			case "public":
				if len(np.Egress) != 2 || np.Egress[1].To[0].IPBlock == nil || len(np.Egress[1].To[0].IPBlock.Except) == 0 {
					t.Errorf("--network public: egress %+v, want DNS and the internet minus private ranges", np.Egress)
				}
			default:
				if len(np.Egress) != 0 || files["20-ciliumnetworkpolicy-demo-pi-egress.yaml"] == nil {
					t.Errorf("--network %s: egress %+v, Cilium policy %v; want none (DNS and the names only in the Cilium policy)", nw, np.Egress, files["20-ciliumnetworkpolicy-demo-pi-egress.yaml"] != nil)
				}
				files, _, stderr := export(t, folder(t, o), "--egress", "none")
				np = template_(t, files, "demo-pi").Spec.NetworkPolicy
				if len(np.Egress) != 1 || len(np.Egress[0].To) != 1 || np.Egress[0].To[0].PodSelector == nil || files["20-ciliumnetworkpolicy-demo-pi-egress.yaml"] != nil {
					t.Errorf("--network %s --egress none: egress %+v; want the cluster's DNS only and no Cilium policy", nw, np.Egress)
				}
				if !strings.Contains(stderr, "the allow list (") || !strings.Contains(stderr, "is not enforced") {
					t.Errorf("--egress none: the notes do not say the list is not enforced:\n%s", stderr)
				}
			}
		})
	}
}
