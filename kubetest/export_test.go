package kubetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	extv1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/kubeexport"
	"github.com/agents-sandbox/asb/kubeexport/cluster"
	"github.com/agents-sandbox/asb/kubetest/controlplane"
	"github.com/agents-sandbox/asb/schema"
	"github.com/agents-sandbox/asb/templates"
)

// scenario is one folder to export, apply and reconcile.
type scenario struct {
	name     string
	opts     schema.InitOptions
	export   kubeexport.Options
	sessions []string
}

func scenarios(t *testing.T) []scenario {
	var out []scenario
	agents, err := generator.Agents(templates.FS)
	if err != nil || len(agents) < 5 {
		t.Fatalf("presets: %v %v", agents, err)
	}
	for _, a := range agents { // each preset
		out = append(out, scenario{name: "preset-" + a, opts: generator.DefaultOptions(a, "p-"+a)})
	}
	for _, nw := range []string{schema.NetworkNone, schema.NetworkPublic, schema.NetworkBalanced} { // each network mode (allow: the presets)
		o := generator.DefaultOptions("pi", "net-"+nw)
		o.Network = nw
		out = append(out, scenario{name: "network-" + nw, opts: o})
	}
	rich := generator.DefaultOptions("opencode", "rich")
	rich.Secrets = []schema.SecretSpec{{Name: "GITHUB_TOKEN", Hosts: []string{"api.github.com", "github.com"}}}
	rich.Ports = []string{"5173:5173", "9000:9000/udp"}
	rich.Also = []string{"claude-code"}                                   // a second agent
	rich.TmpSize, rich.RootDisk, rich.WorkspaceQuota = "256M", "6G", "3G" // a mount (/tmp) and the limits
	rich.Record = &schema.Record{Asb: "dev", Workspace: origin}           // a recorded origin
	out = append(out, scenario{name: "rich", opts: rich, sessions: []string{"alice", "bob"},
		export: kubeexport.Options{RuntimeClass: "kata", StorageClass: "fast"}})
	return out
}

// TestControlPlaneReconcilesTheExport applies the export of each preset,
// each network mode, and a folder with ports, a tmpfs mount, limits, a
// second agent, sessions and a recorded origin, to a real kube-apiserver
// by server-side apply through a kubeconfig (asb export kubernetes
// --apply), lets agent-sandbox's own controllers reconcile each claim, and
// checks what they made: the Sandbox, its Pod (admitted under the
// restricted Pod Security Standard), PVCs, Service and NetworkPolicy.
func TestControlPlaneReconcilesTheExport(t *testing.T) {
	plane := controlplane.Start(t, "../kubeexport/testdata/crds")
	t.Setenv("KUBECONFIG", plane.Kubeconfig)
	k := &cluster.Cluster{ReconcileWait: time.Minute} // FromKubeconfig: the user's path
	cs := kubernetes.NewForConfigOrDie(plane.Config)
	for _, sc := range scenarios(t) {
		t.Run(sc.name, func(t *testing.T) {
			sc.export.Sessions = sc.sessions
			dir := folder(t, sc.opts)
			_, src := exported(t, dir, sc.export)
			out := applyCommand(t, k, dir, optsOf(sc.export))
			claims := sc.sessions
			if len(claims) == 0 {
				claims = []string{""}
			}
			for _, s := range claims {
				name := kubeexport.ClaimName(src.Name, s)
				pod := reconciled(t, plane, cs, name)
				checkPod(t, pod, src, optsOf(sc.export), s)
				checkPVCs(t, cs, plane.Namespace, name, src, sc.export.StorageClass)
			}
			checkNetworkPolicy(t, cs, plane.Namespace, src)
			if strings.Contains(out, canary) {
				t.Errorf("the apply's output holds a secret's value")
			}
		})
	}
	t.Run("wrong-export", func(t *testing.T) { wrongExportFails(t, k, plane) })
	t.Run("no-cilium", func(t *testing.T) { missingCRDIsNamed(t, k) })
	t.Run("kube-agent-claim", func(t *testing.T) { agentClaims(t, k, plane, cs) })
}

// applyCommand runs asb-export's own entry point as asb export kubernetes
// --apply runs it, on the kubeconfig of $KUBECONFIG, and returns what it
// printed (logged: docs/kubernetes.md quotes it).
func applyCommand(t *testing.T, k *cluster.Cluster, dir string, o kubeexport.Options) string {
	t.Helper()
	args := []string{"--dir", dir, "--apply", "--image", "registry.example.com/team/demo:1",
		"--runtime-class", o.RuntimeClass, "--egress", o.Egress, "--storage-class", o.StorageClass}
	for _, s := range o.Sessions {
		args = append(args, "--session", s)
	}
	var out, errOut bytes.Buffer
	code := kubeexport.MainWith(context.Background(), k, args, kubeexport.IO{In: os.Stdin, Out: &out, Err: &errOut}, os.Getenv)
	t.Logf("asb export kubernetes --apply (exit %d):\n%s%s", code, out.String(), errOut.String())
	if code != 0 {
		t.Fatalf("asb export kubernetes --apply exited %d", code)
	}
	return out.String() + errOut.String()
}

func optsOf(o kubeexport.Options) kubeexport.Options {
	if o.RuntimeClass == "" {
		o.RuntimeClass = "gvisor"
	}
	if o.Egress == "" {
		o.Egress = kubeexport.EgressNone
	}
	return o
}

// reconciled waits for the claim's Sandbox and its Pod, made by the
// controllers, and returns the Pod.
func reconciled(t *testing.T, plane *controlplane.Plane, cs kubernetes.Interface, claim string) *corev1.Pod {
	t.Helper()
	c, err := cluster.New(plane.Config, plane.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	var pod *corev1.Pod
	err = wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		name, err := c.PodOf(ctx, claim)
		if err != nil || name == "" {
			return false, nil
		}
		pod, err = cs.CoreV1().Pods(plane.Namespace).Get(ctx, name, metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("claim %s: no pod within 60 s: %v\nthe claim: %s\nevents:\n%s\nthe controllers said:\n%s", claim, err, claimStatus(plane, claim), events(cs, plane.Namespace), plane.Log.Tail(8000))
	}
	return pod
}

// claimStatus is the claim's status, for a failing test's message.
func claimStatus(plane *controlplane.Plane, claim string) string {
	c, err := cluster.New(plane.Config, plane.Namespace)
	if err != nil {
		return err.Error()
	}
	u, err := c.Dynamic.Resource(extv1.GroupVersion.WithResource("sandboxclaims")).Namespace(plane.Namespace).Get(context.Background(), claim, metav1.GetOptions{})
	if err != nil {
		return err.Error()
	}
	b, _ := json.Marshal(u.Object["status"])
	return string(b)
}

// events are the namespace's events, for a failing test's message: what
// the controllers and admission said.
func events(cs kubernetes.Interface, ns string) string {
	list, err := cs.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, e := range list.Items {
		fmt.Fprintf(&b, "%s %s/%s: %s: %s\n", e.Type, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message)
	}
	return b.String()
}

// checkPod: the runtime class, the image, the agent's env with each
// secret by secretKeyRef and no value, the config read-only at its target
// and the workspace read-write, the security context, the limits, and for
// a session its own branch for the init container.
func checkPod(t *testing.T, pod *corev1.Pod, src *kubeexport.Source, o kubeexport.Options, session string) {
	t.Helper()
	spec := pod.Spec
	if spec.RuntimeClassName == nil || *spec.RuntimeClassName != o.RuntimeClass {
		t.Errorf("%s: runtime class %v, want %s", pod.Name, spec.RuntimeClassName, o.RuntimeClass)
	}
	agent := container(t, spec.Containers, kubeexport.AgentContainer)
	if agent.Image != "registry.example.com/team/demo:1" || agent.WorkingDir != "/workspace" {
		t.Errorf("%s: image %s in %s", pod.Name, agent.Image, agent.WorkingDir)
	}
	refs := map[string]string{}
	for _, e := range agent.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			refs[e.Name] = e.ValueFrom.SecretKeyRef.Name + "/" + e.ValueFrom.SecretKeyRef.Key
		}
		if strings.Contains(e.Value, canary) {
			t.Errorf("%s: env %s holds a secret's value", pod.Name, e.Name)
		}
	}
	for _, s := range src.Secrets {
		if refs[s.Env] != kubeexport.SecretName(src.Name)+"/"+s.Key {
			t.Errorf("%s: env %s is %q, want a secretKeyRef to %s/%s", pod.Name, s.Env, refs[s.Env], kubeexport.SecretName(src.Name), s.Key)
		}
	}
	mounts := map[string]bool{}
	for _, m := range agent.VolumeMounts {
		mounts[m.MountPath] = m.ReadOnly
	}
	for _, c := range src.Configs {
		if ro, ok := mounts[c.Target]; !ok || !ro {
			t.Errorf("%s: %s config at %s: mounted %v, read-only %v; want read-only", pod.Name, c.Agent, c.Target, ok, ro)
		}
	}
	if ro, ok := mounts["/workspace"]; !ok || ro {
		t.Errorf("%s: /workspace mounted %v read-only %v; want read-write", pod.Name, ok, ro)
	}
	checkSecurity(t, pod)
	checkInit(t, pod, src, session)
}

func container(t *testing.T, cs []corev1.Container, name string) corev1.Container {
	t.Helper()
	i := slices.IndexFunc(cs, func(c corev1.Container) bool { return c.Name == name })
	if i < 0 {
		t.Fatalf("no container %s in %v", name, cs)
	}
	return cs[i]
}

// checkSecurity: dev (1000), non-root, no privilege escalation, every
// capability dropped, seccomp RuntimeDefault, no service account token.
func checkSecurity(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	ps := pod.Spec.SecurityContext
	if ps == nil || ps.RunAsUser == nil || *ps.RunAsUser != 1000 || ps.RunAsNonRoot == nil || !*ps.RunAsNonRoot ||
		ps.SeccompProfile == nil || ps.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("%s: pod security context %+v", pod.Name, ps)
	}
	if pod.Spec.AutomountServiceAccountToken == nil || *pod.Spec.AutomountServiceAccountToken {
		t.Errorf("%s: the service account token is mounted", pod.Name)
	}
	for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
		sc := c.SecurityContext
		if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
			t.Errorf("%s: container %s security context %+v", pod.Name, c.Name, sc)
		}
	}
}

// checkInit: with an origin, the init container waits for the workspace
// (no egress), on the session's own branch; without one, none.
func checkInit(t *testing.T, pod *corev1.Pod, src *kubeexport.Source, session string) {
	t.Helper()
	if src.Workspace.URL == "" {
		if len(pod.Spec.InitContainers) != 0 {
			t.Errorf("%s: init containers %v without an origin", pod.Name, pod.Spec.InitContainers)
		}
		return
	}
	init := container(t, pod.Spec.InitContainers, kubeexport.InitContainer)
	env := map[string]string{}
	for _, e := range init.Env {
		env[e.Name] = e.Value
	}
	want := ""
	if session != "" {
		want = schema.SessionBranchPrefix + session
	}
	if env[kubeexport.SessionBranchEnv] != want || env["ASB_COMMIT"] != src.Workspace.Commit {
		t.Errorf("%s: init env %v; want %s=%q at %s", pod.Name, env, kubeexport.SessionBranchEnv, want, src.Workspace.Commit)
	}
}

// checkPVCs: home and workspace, of the folder's sizes and storage class.
func checkPVCs(t *testing.T, cs kubernetes.Interface, ns, sandbox string, src *kubeexport.Source, class string) {
	t.Helper()
	for _, v := range []string{"home", "workspace"} {
		pvc, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(context.Background(), v+"-"+sandbox, metav1.GetOptions{})
		if err != nil {
			t.Errorf("PVC %s-%s: %v", v, sandbox, err)
			continue
		}
		size := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
		if v == "workspace" && src.Limits[schema.LimitWorkspaceQuota] == "3G" && size.String() != "3Gi" {
			t.Errorf("PVC %s: %s, want the workspace quota 3Gi", pvc.Name, size.String())
		}
		if class != "" && (pvc.Spec.StorageClassName == nil || *pvc.Spec.StorageClassName != class) {
			t.Errorf("PVC %s: storage class %v, want %s", pvc.Name, pvc.Spec.StorageClassName, class)
		}
	}
	// The export asks for no Service (ingress is denied; port-forward and
	// exec need none), and the controller makes none.
	if _, err := cs.CoreV1().Services(ns).Get(context.Background(), sandbox, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Service %s: %v; want none", sandbox, err)
	}
}

// checkNetworkPolicy: the controllers' NetworkPolicy for the template's
// pods denies all ingress, and egress as the folder's network says.
func checkNetworkPolicy(t *testing.T, cs kubernetes.Interface, ns string, src *kubeexport.Source) {
	t.Helper()
	var np *networkingv1.NetworkPolicy
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := cs.NetworkingV1().NetworkPolicies(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for i, p := range list.Items {
			if slices.ContainsFunc(p.OwnerReferences, func(o metav1.OwnerReference) bool { return o.Kind == "SandboxTemplate" && o.Name == src.Name }) {
				np = &list.Items[i]
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no NetworkPolicy of the template %s: %v\n%s", src.Name, err, events(cs, ns))
	}
	types := np.Spec.PolicyTypes
	if !slices.Contains(types, networkingv1.PolicyTypeIngress) || !slices.Contains(types, networkingv1.PolicyTypeEgress) || len(np.Spec.Ingress) != 0 {
		t.Errorf("%s: policy types %v, ingress %v; want both denied but for egress rules", np.Name, types, np.Spec.Ingress)
	}
	e := np.Spec.Egress
	switch src.Network.Policy {
	case "none":
		if len(e) != 0 {
			t.Errorf("%s: --network none, egress %+v", np.Name, e)
		}
	case "public", "default":
		if len(e) != 2 || e[1].To[0].IPBlock == nil || !slices.Contains(e[1].To[0].IPBlock.Except, "169.254.0.0/16") {
			t.Errorf("%s: public, egress %+v; want DNS and the internet minus private ranges", np.Name, e)
		}
	default: // an allow list with --egress none: DNS only
		if len(e) != 1 || len(e[0].To) != 1 || e[0].To[0].IPBlock != nil {
			t.Errorf("%s: allow list, egress %+v; want the cluster's DNS only", np.Name, e)
		}
	}
	if !selects(np.Spec.PodSelector, src.Name) {
		t.Errorf("%s: selects %v", np.Name, np.Spec.PodSelector)
	}
}

func selects(sel metav1.LabelSelector, _ string) bool {
	return len(sel.MatchLabels)+len(sel.MatchExpressions) > 0
}
