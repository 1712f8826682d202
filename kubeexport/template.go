package kubeexport

import (
	"fmt"
	"regexp"
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
	policy, err := addInit(&spec, src, image, ex)
	if err != nil {
		return nil, err
	}
	if spec.Volumes, err = podVolumes(src); err != nil {
		return nil, err
	}
	claims, err := volumeClaims(src, o)
	if err != nil {
		return nil, err
	}
	return &extv1.SandboxTemplate{
		TypeMeta:   metav1.TypeMeta{APIVersion: extv1.GroupVersion.String(), Kind: "SandboxTemplate"},
		ObjectMeta: meta(src, templateName(src.Name)),
		Spec: extv1.SandboxTemplateSpec{
			SandboxBlueprint: sandboxv1.SandboxBlueprint{
				PodTemplate:          sandboxv1.PodTemplate{ObjectMeta: sandboxv1.PodMetadata{Labels: labels(src)}, Spec: spec},
				VolumeClaimTemplates: claims,
				// No Service: ingress is denied, and kubectl port-forward
				// and exec reach the pod without one.
				Service: new(false),
			},
			NetworkPolicyManagement: extv1.NetworkPolicyManagementManaged,
			NetworkPolicy:           networkPolicy(src, o),
			EnvVarsInjectionPolicy:  policy,
		},
	}, nil
}

// addInit adds the init container that fills the workspace, when asb.yaml
// records an origin, and says which env a claim may add: a session's
// claim names its branch (SessionBranchEnv) for the init container, and
// Allowed adds a variable, never changes one of the template's.
func addInit(spec *corev1.PodSpec, src *Source, image string, ex *Export) (extv1.EnvVarsInjectionPolicy, error) {
	init, err := initSpec(src, image)
	if err != nil {
		return "", err
	}
	if init == nil {
		ex.Notes = append(ex.Notes, "workspace: asb.yaml records no git origin, so /workspace starts empty; copy your project in with kubectl cp, or record an origin (asb init --workspace URL)")
		return extv1.EnvVarsInjectionPolicyDisallowed, nil
	}
	spec.InitContainers = []corev1.Container{*init}
	return extv1.EnvVarsInjectionPolicyAllowed, nil
}

func securityContext() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: new(false),
		RunAsNonRoot:             new(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}

// keeper is the agent container's command: it keeps the pod up, as the
// VM is up, and the agent runs by the API's exec (asb kube agent, kubectl
// exec), as asb task agent runs it in the VM by msb exec.
var keeper = []string{"sh", "-c", "trap 'exit 0' TERM INT; while :; do sleep 86400 & wait $!; done"}

// agentSpec is the agent's container, in /workspace, with the project's
// CPUs, memory and root disk.
func agentSpec(src *Source, image string) (corev1.Container, error) {
	res, err := resources(src)
	if err != nil {
		return corev1.Container{}, err
	}
	c := corev1.Container{
		Name: agentContainer, Image: image, Command: keeper,
		WorkingDir:      "/workspace",
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
	for i, t := range src.Tmpfs {
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: tmpfsVolume(i), MountPath: t.Target})
	}
	return c, nil
}

func configVolume(i int) string { return "agent-config-" + strconv.Itoa(i) }

func tmpfsVolume(i int) string {
	if i == 0 {
		return tmpVolume
	}
	return tmpVolume + "-" + strconv.Itoa(i)
}

// podVolumes are the ConfigMap's files of each agent, read-only, and each
// tmpfs mount as an emptyDir in memory, of its size (tmp-size).
func podVolumes(src *Source) ([]corev1.Volume, error) {
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
	for i, t := range src.Tmpfs {
		ed := &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}
		if t.Size != "" {
			q, err := quantity(t.Size)
			if err != nil {
				return nil, fmt.Errorf("%s: tmpfs %s: %w", schema.SandboxFile, t.Target, err)
			}
			ed.SizeLimit = &q
		}
		vols = append(vols, corev1.Volume{Name: tmpfsVolume(i), VolumeSource: corev1.VolumeSource{EmptyDir: ed}})
	}
	return vols, nil
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

// quantity is a size in msb's form (512M, 4G, 1.5G) as a Kubernetes
// quantity in MiB.
func quantity(size string) (resource.Quantity, error) {
	mib, err := schema.ParseSize(size)
	if err != nil {
		return resource.Quantity{}, err
	}
	return *resource.NewQuantity(mib<<20, resource.BinarySI), nil
}

// resources are requests equal to limits (the VM's CPUs, memory and root
// disk are its own, not a share): the root disk (root-disk) as the
// container's ephemeral storage, which the kubelet bounds by eviction.
func resources(src *Source) (corev1.ResourceRequirements, error) {
	l := corev1.ResourceList{}
	if src.CPUs > 0 {
		l[corev1.ResourceCPU] = *resource.NewQuantity(int64(src.CPUs), resource.DecimalSI)
	}
	for name, size := range map[corev1.ResourceName]string{corev1.ResourceMemory: src.Memory, corev1.ResourceEphemeralStorage: src.Limits[schema.LimitRootDisk]} {
		if size == "" {
			continue
		}
		q, err := quantity(size)
		if err != nil {
			return corev1.ResourceRequirements{}, fmt.Errorf("%s of the folder: %w", name, err)
		}
		l[name] = q
	}
	if len(l) == 0 {
		return corev1.ResourceRequirements{}, nil
	}
	return corev1.ResourceRequirements{Requests: l, Limits: l.DeepCopy()}, nil
}

// volumeClaims are the home and workspace volumes of each sandbox: the
// workspace of the folder's workspace quota (workspace-quota), home of
// volumeSize, both of o.StorageClass (the cluster's default when unset).
func volumeClaims(src *Source, o Options) ([]sandboxv1.PersistentVolumeClaimTemplate, error) {
	work := resource.MustParse(volumeSize)
	if q := src.Limits[schema.LimitWorkspaceQuota]; q != "" {
		var err error
		if work, err = quantity(q); err != nil {
			return nil, fmt.Errorf("workspace quota: %w", err)
		}
	}
	claim := func(name string, size resource.Quantity) sandboxv1.PersistentVolumeClaimTemplate {
		c := sandboxv1.PersistentVolumeClaimTemplate{
			EmbeddedObjectMetadata: sandboxv1.EmbeddedObjectMetadata{Name: name},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
			},
		}
		if o.StorageClass != "" {
			c.Spec.StorageClassName = new(o.StorageClass)
		}
		return c
	}
	return []sandboxv1.PersistentVolumeClaimTemplate{claim(homeVolume, resource.MustParse(volumeSize)), claim(workVolume, work)}, nil
}

// SessionBranchEnv names, in a session's claim, the branch the init
// container makes for the session (asb/NAME).
const SessionBranchEnv = "ASB_SESSION_BRANCH"

// WorkspaceBundle is where asb kube agent delivers the workspace: a git
// bundle of the recorded origin, streamed into the init container by the
// API's exec. The pod reaches no git host: the clone is made on the user's
// machine, with the user's own credentials.
const WorkspaceBundle = "/workspace/.asb-workspace.bundle"

// initScript fills an empty /workspace volume once asb kube agent has
// delivered the bundle: the recorded commit (on the recorded branch, or the
// session's own), with the origin as its remote; a volume that holds a
// repository already is left as it is. The values arrive as variables,
// quoted where the shell reads them, never spliced into the script.
const initScript = `set -eu
cd "${ASB_WORKSPACE:-/workspace}"
[ -e .git ] && exit 0
b=.asb-workspace.bundle
[ -e "$b" ] || echo "waiting for the workspace: asb kube agent delivers it"
while [ ! -e "$b" ]; do sleep 2; done
git init -q
git fetch -q "$b" '+refs/heads/*:refs/remotes/origin/*'
git fetch -q "$b" HEAD
at=${ASB_COMMIT:-FETCH_HEAD}
if [ -n "${ASB_SESSION_BRANCH:-}" ]; then
  git checkout -q -b "$ASB_SESSION_BRANCH" "$at"
elif [ -n "$ASB_BRANCH" ]; then
  git checkout -q -B "$ASB_BRANCH" "$at"
else
  git checkout -q --detach "$at"
fi
git remote add origin "$ASB_ORIGIN"
rm -f "$b"
`

var commitRe = regexp.MustCompile(`^[0-9a-f]{7,64}$`)

// initSpec is the init container that fills the workspace, or nil when
// asb.yaml records no origin.
func initSpec(src *Source, image string) (*corev1.Container, error) {
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
		Name: initContainer, Image: image,
		Command: []string{"sh", "-c", initScript},
		Env: []corev1.EnvVar{
			{Name: "ASB_ORIGIN", Value: w.URL}, {Name: "ASB_BRANCH", Value: w.Branch}, {Name: "ASB_COMMIT", Value: w.Commit},
			{Name: "HOME", Value: "/tmp"},
		},
		SecurityContext: securityContext(),
		VolumeMounts:    []corev1.VolumeMount{{Name: workVolume, MountPath: "/workspace"}},
	}, nil
}
