// Package kubeexport renders an outer folder as Kubernetes agent-sandbox
// resources (sigs.k8s.io/agent-sandbox): a SandboxTemplate (the pod), a
// SandboxWarmPool it is claimed through, a SandboxClaim per session, the
// agents' configs as a ConfigMap, and the egress policy. Every object is
// built from the API's Go types, never from YAML text. It runs in its own
// executable, asb-export, so that asb does not link Kubernetes' packages.
//
// Files are numbered in the order kubectl apply -f DIR should create them.
package kubeexport

import (
	"fmt"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	extv1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"

	"github.com/agents-sandbox/asb/schema"
)

// Options are the choices of `asb export kubernetes` beyond the folder.
type Options struct {
	// RuntimeClass is the pod's RuntimeClass (gvisor, kata, …); "none"
	// leaves it unset: a plain container on the node's kernel.
	RuntimeClass string
	// Image is the toolchain image as pushed to a registry the cluster
	// pulls from; empty: sandbox.yaml's (a local tag, with a note).
	Image string
	// Sessions get one SandboxClaim each; none: one claim named after
	// the folder.
	Sessions []string
	// Egress is how the allow list is enforced: EgressCilium (a
	// CiliumNetworkPolicy with the names) or EgressNone (no policy of a
	// CNI's own: the NetworkPolicy alone, which names no host).
	Egress string
	// StorageClass is the volume claims' StorageClass; "": the
	// cluster's default.
	StorageClass string
}

// The values of Options.Egress.
const (
	EgressCilium = "cilium"
	EgressNone   = "none"
)

// Object is one resource of the export and the file it is written to.
type Object struct {
	File string
	Obj  any
}

// Export is what Build makes: the objects, and the notes the user must
// read (what is not enforced, what was left out, what to create).
type Export struct {
	Objects []Object
	Notes   []string
}

// AgentContainer and InitContainer are the pod's containers: the agent's
// (which asb kube agent execs into) and the one that fills the workspace.
const (
	AgentContainer = agentContainer
	InitContainer  = initContainer
)

// The names of the pod's parts, shared by the template and its volumes.
const (
	agentContainer = "agent"
	initContainer  = "workspace-init"
	tmpVolume      = "tmp"
	homeVolume     = "home"
	workVolume     = "workspace"
	devUID         = 1000   // dev, as the toolchain image's Dockerfile creates it
	volumeSize     = "10Gi" // a volume's size when the folder sets none
	// ProjectLabel marks every object and the pods with the project.
	ProjectLabel = "app.kubernetes.io/part-of"
	managedLabel = "app.kubernetes.io/managed-by"
)

// Names of the objects of project name.
func templateName(name string) string { return name }
func poolName(name string) string     { return name }
func configName(name string) string   { return name + "-agent-config" }

// SecretName is the Secret the user creates with the secrets' values.
func SecretName(name string) string { return name + "-secrets" }

// Build makes the export of src.
func Build(src *Source, o Options) (*Export, error) {
	if err := checkOptions(src, o); err != nil {
		return nil, err
	}
	ex := &Export{}
	if cm := configMap(src); cm != nil {
		ex.add("10-configmap-"+cm.Name+".yaml", cm)
	}
	tmpl, err := template(src, o, ex)
	if err != nil {
		return nil, err
	}
	// The egress policy first: a pod never runs before it.
	if cnp := ciliumPolicy(src, o); cnp != nil {
		ex.add("20-ciliumnetworkpolicy-"+cnp.Metadata.Name+".yaml", cnp)
	}
	ex.add("30-sandboxtemplate-"+tmpl.Name+".yaml", tmpl)
	pool := warmPool(src)
	ex.add("40-sandboxwarmpool-"+pool.Name+".yaml", pool)
	for _, c := range claims(src, o.Sessions) {
		ex.add("50-sandboxclaim-"+c.Name+".yaml", c)
	}
	ex.Notes = append(ex.Notes, egressNotes(src, o)...)
	ex.Notes = append(ex.Notes, limitNotes(src)...)
	ex.Notes = append(ex.Notes, assumptionNotes(src, o)...)
	ex.Notes = append(ex.Notes, secretNotes(src)...)
	for _, s := range src.Skipped {
		ex.Notes = append(ex.Notes, "not exported: "+s)
	}
	return ex, nil
}

func (ex *Export) add(file string, obj any) {
	ex.Objects = append(ex.Objects, Object{File: file, Obj: obj})
}

// checkOptions refuses names the API server would: every object name is a
// DNS subdomain, and a claim's name becomes its pod's and host's name, a
// DNS label of at most 63 characters.
func checkOptions(src *Source, o Options) error {
	if re := schema.ProjectName(src.Name); re != nil {
		return fmt.Errorf("%s: name: %w; the export names every object after it", schema.RecordFile, re)
	}
	if o.Egress != EgressCilium && o.Egress != EgressNone {
		return fmt.Errorf("--egress %q: use cilium (the allow list as a CiliumNetworkPolicy) or none (no CNI policy: the allow list is not enforced)", o.Egress)
	}
	if o.StorageClass != "" {
		if errs := validation.IsDNS1123Subdomain(o.StorageClass); len(errs) > 0 {
			return fmt.Errorf("--storage-class %q: %s (use the name of a StorageClass of your cluster: kubectl get storageclass)", o.StorageClass, errs[0])
		}
	}
	for _, c := range src.Configs {
		for i, it := range configItems(c) {
			if errs := validation.IsConfigMapKey(it.Key); len(errs) > 0 {
				return fmt.Errorf("the config folder %s: %s: %s; shorten or rename it", c.Dir, c.Files[i].Path, errs[0])
			}
		}
	}
	if o.RuntimeClass != "none" {
		if errs := validation.IsDNS1123Subdomain(o.RuntimeClass); len(errs) > 0 {
			return fmt.Errorf("--runtime-class %q: %s (use kata, gvisor, the name of a RuntimeClass of your cluster, or none)", o.RuntimeClass, errs[0])
		}
	}
	seen := map[string]bool{}
	for _, s := range o.Sessions {
		if re := schema.SessionName(s); re != nil {
			return fmt.Errorf("--session: %w", re)
		}
		if seen[s] {
			return fmt.Errorf("--session %q is given twice: each session is one claim", s)
		}
		seen[s] = true
		if n := claimName(src.Name, s); len(n) > validation.DNS1123LabelMaxLength {
			return fmt.Errorf("--session %q: the claim %s would be longer than %d characters, the most a pod's host name may have; use a shorter session name", s, n, validation.DNS1123LabelMaxLength)
		}
	}
	return nil
}

func meta(src *Source, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Labels: labels(src)}
}

func labels(src *Source) map[string]string {
	return map[string]string{ProjectLabel: src.Name, managedLabel: "asb"}
}

// configMap holds every agent's config folder; the volumes' items put each
// file back at its path.
func configMap(src *Source) *corev1.ConfigMap {
	if len(src.Configs) == 0 {
		return nil
	}
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: meta(src, configName(src.Name))}
	for _, c := range src.Configs {
		for i, it := range configItems(c) {
			f := c.Files[i]
			if utf8.Valid(f.Data) {
				setMap(&cm.Data, it.Key, string(f.Data))
			} else {
				setBinary(&cm.BinaryData, it.Key, f.Data)
			}
		}
	}
	return cm
}

// configItems are the keys and paths of one config folder's files, each
// key unique (two paths that map to one key get a number).
func configItems(c Config) []corev1.KeyToPath {
	var items []corev1.KeyToPath
	used := map[string]bool{}
	for _, f := range c.Files {
		key := configKey(c.Agent, f.Path)
		for i := 2; used[key]; i++ {
			key = fmt.Sprintf("%s.%d", configKey(c.Agent, f.Path), i)
		}
		used[key] = true
		items = append(items, corev1.KeyToPath{Key: key, Path: f.Path})
	}
	return items
}

func setMap(m *map[string]string, k, v string) {
	if *m == nil {
		*m = map[string]string{}
	}
	(*m)[k] = v
}

func setBinary(m *map[string][]byte, k string, v []byte) {
	if *m == nil {
		*m = map[string][]byte{}
	}
	(*m)[k] = v
}

func warmPool(src *Source) *extv1.SandboxWarmPool {
	return &extv1.SandboxWarmPool{
		TypeMeta:   metav1.TypeMeta{APIVersion: extv1.GroupVersion.String(), Kind: "SandboxWarmPool"},
		ObjectMeta: meta(src, poolName(src.Name)),
		Spec: extv1.SandboxWarmPoolSpec{
			// No spare pods: a spare would hold the secrets' values with
			// nobody using it. Each claim starts its own sandbox.
			Replicas:    new(int32(0)),
			TemplateRef: extv1.SandboxTemplateRef{Name: templateName(src.Name)},
			// A spare made from an older template (another image, a
			// narrower egress policy) is replaced at once, never handed out.
			UpdateStrategy: &extv1.SandboxWarmPoolUpdateStrategy{Type: extv1.RecreateSandboxWarmPoolUpdateStrategyType},
		},
	}
}

func claimName(project, session string) string {
	if session == "" {
		return project
	}
	return project + "-" + session
}

// claims are one SandboxClaim per session, each its own pod with its own
// home and workspace volumes; a session's workspace is on its own branch,
// asb/NAME, as asb session new makes it locally.
func claims(src *Source, sessions []string) []*extv1.SandboxClaim {
	if len(sessions) == 0 {
		sessions = []string{""}
	}
	var out []*extv1.SandboxClaim
	for _, s := range sessions {
		out = append(out, Claim(src, s))
	}
	return out
}

// Claim is the SandboxClaim of session ("": the folder's own).
func Claim(src *Source, session string) *extv1.SandboxClaim {
	c := &extv1.SandboxClaim{
		TypeMeta:   metav1.TypeMeta{APIVersion: extv1.GroupVersion.String(), Kind: "SandboxClaim"},
		ObjectMeta: meta(src, claimName(src.Name, session)),
		Spec: extv1.SandboxClaimSpec{
			WarmPoolRef: extv1.SandboxWarmPoolRef{Name: poolName(src.Name)},
			// On expiry (shutdownTime, which asb export --apply and asb kube
			// agent set from max_duration) the sandbox goes; the claim stays
			// as the record of the session.
			Lifecycle: &extv1.Lifecycle{ShutdownPolicy: extv1.ShutdownPolicyRetain},
		},
	}
	if session != "" && src.Workspace.URL != "" {
		c.Spec.Env = []extv1.EnvVar{{Name: SessionBranchEnv, Value: schema.SessionBranchPrefix + session, ContainerName: initContainer}}
	}
	return c
}

// ClaimName is the claim (and sandbox, pod, host) name of a session.
func ClaimName(project, session string) string { return claimName(project, session) }
