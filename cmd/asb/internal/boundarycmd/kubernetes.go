package boundarycmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/agents-sandbox/asb/outer"
)

// Point is one promise of the local boundary and what of it holds in a
// pod that asb export kubernetes made (docs/kubernetes.md, point by point).
type Point struct {
	Topic   string `json:"topic"`
	Local   string `json:"local"`
	Cluster string `json:"cluster"`
	Holds   string `json:"holds"` // yes, no, depends
}

// kubernetesPoints are the differences, with the folder's own names.
func kubernetesPoints(b *outer.Boundary) []Point {
	var secrets []string
	for _, s := range b.Secrets {
		secrets = append(secrets, s.Name)
	}
	names := "none"
	if len(secrets) > 0 {
		names = strings.Join(secrets, ", ")
	}
	return []Point{
		{"secrets", "the VM holds a placeholder; msb's proxy on your host puts the value into requests to the bound hosts only",
			"the pod's environment holds the real values (" + names + ") from the Secret you create: no substitution proxy, nothing limits which host a value is sent to, and whoever may exec into the pod or read Secrets in the namespace reads them", "no"},
		{"isolation", "a microVM with its own kernel (msb, KVM)",
			"what the RuntimeClass gives: kata, a microVM per pod (its own kernel, as locally); gvisor, a kernel in user space that intercepts system calls (no hardware virtualization boundary); none, the node's kernel shared with every pod (namespaces, seccomp, no capabilities)", "depends"},
		{"files", "only the listed mounts; never the outer folder, $HOME or secrets.env",
			"no folder of any machine: /workspace is a volume filled from the recorded origin, cloned on your machine by asb kube agent (the pod reaches no git host), /home/dev a volume per claim, /tmp in memory, the agent's config a read-only ConfigMap; no service account token is mounted", "yes"},
		{"network", "msb enforces the allow list by name (DNS and TLS), the deny list, and keeps private ranges out", networkOnCluster(b.Network), "depends"},
		{"ports", "forwarded from 127.0.0.1 on your host", "no ingress is allowed; reach a port with kubectl port-forward, which anyone with that right in the namespace can", "depends"},
		{"approval", "asb task runs only a folder that is asb's render or approved by you",
			"asb export refuses an unapproved folder too; once applied, the cluster runs what was exported, whoever changes the resources there", "yes"},
	}
}

func printKubernetes(w io.Writer, b *outer.Boundary) {
	fmt.Fprintf(w, "Boundary of %s on Kubernetes (asb export kubernetes), against the local VM:\n", b.Dir)
	for _, p := range kubernetesPoints(b) {
		fmt.Fprintf(w, "\n%s (holds on the cluster: %s)\n  local:   %s\n  cluster: %s\n", p.Topic, p.Holds, p.Local, p.Cluster)
	}
	fmt.Fprintln(w, "\nAbove all: the pod holds the real secret values. docs/kubernetes.md has the flow and each point.")
}

// networkOnCluster is what the export's egress policy does with the
// folder's network policy (kubeexport/egress.go).
func networkOnCluster(nw outer.NetworkView) string {
	where := ", where the CNI enforces NetworkPolicy (not flannel alone, which lets everything out)"
	var s string
	switch nw.Policy {
	case "none":
		s = "the NetworkPolicy lets nothing out, not even DNS" + where
	case "open":
		s = "everything, as locally"
	case "public", "default":
		s = "the NetworkPolicy lets DNS and the public internet out, private ranges kept out by address" + where
	default:
		s = fmt.Sprintf("the allow list (%d hosts) is enforced only by Cilium (asb export --egress cilium, the default): its toFQDNs by DNS answers, not TLS names, and DNS for those names only; the NetworkPolicy lets nothing else out%s. With --egress none, or on another CNI, the NetworkPolicy lets only DNS out and the agent reaches none of the hosts", len(nw.Allow), where)
	}
	if len(nw.Deny) > 0 {
		s += "; the deny list is not enforced"
	}
	return s
}
