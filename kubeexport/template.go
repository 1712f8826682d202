package kubeexport

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sandboxv1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
	extv1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"

	"github.com/agents-sandbox/asb/schema"
)

// template is the SandboxTemplate: the pod every claim of the project
// runs, its home and workspace volumes, and its NetworkPolicy.
func template(src *Source, o Options, ex *Export) (*extv1.SandboxTemplate, error) {
	image := o.Image
	if image == "" {
		image = src.Image
		ex.Notes = append(ex.Notes, fmt.Sprintf("image %s is sandbox.yaml's local tag: push the toolchain image to a registry your cluster pulls from and export again with --image REF", image))
	}
	if !schema.ValidImageRef(image) {
		return nil, fmt.Errorf("--image %q is not an image reference (e.g. registry.example.com/team/demo:opencode-1)", image)
	}
	agent, err := agentSpec(src, image)
	if err != nil {
		return nil, err
	}
	spec := corev1.PodSpec{
		AutomountServiceAccountToken: new(false), // the agent gets no credential of the cluster
		EnableServiceLinks:           new(false),
		SecurityContext: &corev1.PodSecurityContext{
			RunAsUser: new(int64(devUID)), RunAsGroup: new(int64(devUID)), FSGroup: new(int64(devUID)),
			RunAsNonRoot:   new(true),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		Containers: []corev1.Container{agent},
	}
	if o.RuntimeClass != "none" {
		spec.RuntimeClassName = new(o.RuntimeClass)
	}
	clone, err := cloneSpec(src, image)
	if err != nil {
		return nil, err
	}
	if clone != nil {
		spec.InitContainers = []corev1.Container{*clone}
	} else {
		ex.Notes = append(ex.Notes, "workspace: asb.yaml records no git origin, so /workspace starts empty; copy your project in with kubectl cp, or record an origin (asb init --workspace URL)")
	}
	spec.Volumes = configVolumes(src)
	return &extv1.SandboxTemplate{
		TypeMeta:   metav1.TypeMeta{APIVersion: extv1.GroupVersion.String(), Kind: "SandboxTemplate"},
		ObjectMeta: meta(src, templateName(src.Name)),
		Spec: extv1.SandboxTemplateSpec{
			SandboxBlueprint: sandboxv1.SandboxBlueprint{
				PodTemplate:          sandboxv1.PodTemplate{ObjectMeta: sandboxv1.PodMetadata{Labels: labels(src)}, Spec: spec},
				VolumeClaimTemplates: []sandboxv1.PersistentVolumeClaimTemplate{volumeClaim(homeVolume), volumeClaim(workVolume)},
			},
			NetworkPolicyManagement: extv1.NetworkPolicyManagementManaged,
			NetworkPolicy:           networkPolicy(src),
		},
	}, nil
}

func securityContext() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: new(false),
		RunAsNonRoot:             new(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}

// agentSpec is the agent: its command on a terminal (kubectl attach
// -it reaches it), in /workspace, with the project's CPUs and memory.
func agentSpec(src *Source, image string) (corev1.Container, error) {
	res, err := resources(src)
	if err != nil {
		return corev1.Container{}, err
	}
	c := corev1.Container{
		Name: agentContainer, Image: image, Command: slices.Clone(src.Agent.Command),
		WorkingDir: "/workspace", Stdin: true, TTY: true,
		Env:             env(src),
		Resources:       res,
		SecurityContext: securityContext(),
		VolumeMounts: []corev1.VolumeMount{
			{Name: homeVolume, MountPath: "/home/dev"},
			{Name: workVolume, MountPath: "/workspace"},
		},
	}
	for _, p := range src.Ports {
		c.Ports = append(c.Ports, corev1.ContainerPort{ContainerPort: int32(p.Guest), Protocol: corev1.Protocol(strings.ToUpper(p.Protocol))})
	}
	for i, cfg := range src.Configs {
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: configVolume(i), MountPath: cfg.Target, ReadOnly: true})
	}
	return c, nil
}

func configVolume(i int) string { return "agent-config-" + strconv.Itoa(i) }

// configVolumes are the ConfigMap's files of each agent, read-only.
func configVolumes(src *Source) []corev1.Volume {
	var vols []corev1.Volume
	for i, cfg := range src.Configs {
		vols = append(vols, corev1.Volume{Name: configVolume(i), VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: configName(src.Name)},
				Items:                configItems(cfg),
				DefaultMode:          new(int32(0o444)),
			},
		}})
	}
	return vols
}

// env is sandbox.yaml's plain variables, then each secret as a reference
// to a key of the Secret the user creates: the value is never here.
func env(src *Source) []corev1.EnvVar {
	var out []corev1.EnvVar
	for _, k := range sortedKeys(src.Env) {
		out = append(out, corev1.EnvVar{Name: k, Value: src.Env[k]})
	}
	for _, s := range src.Secrets {
		out = append(out, corev1.EnvVar{Name: s.Env, ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: SecretName(src.Name)}, Key: s.Key},
		}})
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

var msbSize = regexp.MustCompile(`^([0-9]*\.?[0-9]+)([MmGg]?)$`)

// resources are requests equal to limits (the VM's CPUs and memory are
// its own, not a share): memory in msb's units, MiB and GiB.
func resources(src *Source) (corev1.ResourceRequirements, error) {
	l := corev1.ResourceList{}
	if src.CPUs > 0 {
		l[corev1.ResourceCPU] = *resource.NewQuantity(int64(src.CPUs), resource.DecimalSI)
	}
	if src.Memory != "" {
		m := msbSize.FindStringSubmatch(src.Memory)
		if m == nil {
			return corev1.ResourceRequirements{}, fmt.Errorf("%s: memory %q is not a size msb reads", schema.SandboxFile, src.Memory)
		}
		f, _ := strconv.ParseFloat(m[1], 64)
		if strings.EqualFold(m[2], "g") {
			f *= 1024
		}
		l[corev1.ResourceMemory] = *resource.NewQuantity(int64(f)<<20, resource.BinarySI)
	}
	if len(l) == 0 {
		return corev1.ResourceRequirements{}, nil
	}
	return corev1.ResourceRequirements{Requests: l, Limits: l.DeepCopy()}, nil
}

func volumeClaim(name string) sandboxv1.PersistentVolumeClaimTemplate {
	return sandboxv1.PersistentVolumeClaimTemplate{
		EmbeddedObjectMetadata: sandboxv1.EmbeddedObjectMetadata{Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceStorage: resource.MustParse(volumeSize),
			}},
		},
	}
}

// cloneScript fills an empty /workspace volume from the recorded origin,
// at the recorded commit (on the recorded branch); a volume that holds a
// repository already is left as it is. The values arrive as variables,
// quoted where the shell reads them, never spliced into the script.
const cloneScript = `set -eu
cd /workspace
[ -e .git ] && exit 0
git init -q
git remote add origin "$ASB_ORIGIN"
git fetch -q origin
if [ -n "$ASB_COMMIT" ]; then
  git checkout -q --detach "$ASB_COMMIT"
  [ -z "$ASB_BRANCH" ] || git checkout -q -B "$ASB_BRANCH"
elif [ -n "$ASB_BRANCH" ]; then
  git checkout -q -B "$ASB_BRANCH" "origin/$ASB_BRANCH"
else
  git fetch -q origin HEAD
  git checkout -q --detach FETCH_HEAD
fi
`

var commitRe = regexp.MustCompile(`^[0-9a-f]{7,64}$`)

// cloneSpec is the init container that clones the workspace, or nil
// when asb.yaml records no origin.
func cloneSpec(src *Source, image string) (*corev1.Container, error) {
	w := src.Workspace
	if w.URL == "" {
		return nil, nil
	}
	if err := schema.CheckRecordedOrigin(w.URL); err != nil {
		return nil, err
	}
	if err := schema.CheckRecordedBranch(w.Branch); err != nil {
		return nil, err
	}
	if w.Commit != "" && !commitRe.MatchString(w.Commit) {
		return nil, fmt.Errorf("%s: workspace.commit %q is not a commit id; restore asb.yaml from git", schema.RecordFile, w.Commit)
	}
	return &corev1.Container{
		Name: cloneContainer, Image: image,
		Command: []string{"sh", "-c", cloneScript},
		Env: []corev1.EnvVar{
			{Name: "ASB_ORIGIN", Value: w.URL}, {Name: "ASB_BRANCH", Value: w.Branch}, {Name: "ASB_COMMIT", Value: w.Commit},
			{Name: "HOME", Value: "/tmp"},
		},
		SecurityContext: securityContext(),
		VolumeMounts:    []corev1.VolumeMount{{Name: workVolume, MountPath: "/workspace"}},
	}, nil
}
