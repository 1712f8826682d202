package kubeexport

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	extv1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"
)

// The egress policy. A Kubernetes NetworkPolicy knows addresses, not
// names, so the template's policy (which agent-sandbox's controller turns
// into one NetworkPolicy for every pod of the template) denies all ingress
// and, with an allow list, all egress; the list, which is names, becomes a
// CiliumNetworkPolicy with toFQDNs and DNS for those names only (--egress
// cilium): Cilium is the common CNI that can allow a name (its DNS proxy
// learns the addresses behind it). Policies add up, and a NetworkPolicy
// that allowed DNS would open every name to Cilium's DNS proxy too, so the
// NetworkPolicy allows no DNS then. With --egress none the NetworkPolicy
// allows DNS alone: the agent reaches no host until the cluster's own FQDN
// policy allows the list. On a CNI that does not enforce NetworkPolicy,
// the pod reaches everything.

// dnsRule lets the pod ask the cluster's DNS (kube-dns / CoreDNS).
func dnsRule() networkingv1.NetworkPolicyEgressRule {
	udp, tcp := corev1.ProtocolUDP, corev1.ProtocolTCP
	port := intstr.FromInt32(53)
	return networkingv1.NetworkPolicyEgressRule{
		To: []networkingv1.NetworkPolicyPeer{{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "kube-system"}},
			PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"k8s-app": "kube-dns"}},
		}},
		Ports: []networkingv1.NetworkPolicyPort{{Protocol: &udp, Port: &port}, {Protocol: &tcp, Port: &port}},
	}
}

// privateRanges are what msb's public policy keeps from the VM: private,
// loopback, link-local (the cloud's metadata server) and shared ranges.
var privateRanges4 = []string{"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "100.64.0.0/10", "127.0.0.0/8"}
var privateRanges6 = []string{"fc00::/7", "fe80::/10", "::1/128"}

// networkPolicy is the template's: ingress denied (attach with kubectl
// exec/attach, forward ports with kubectl port-forward, neither of which
// crosses it), egress as the folder's policy allows.
func networkPolicy(src *Source, o Options) *extv1.NetworkPolicySpec {
	np := &extv1.NetworkPolicySpec{}
	switch src.Network.Policy {
	case "none":
		// no egress at all, not even DNS
	case "open":
		np.Egress = []networkingv1.NetworkPolicyEgressRule{{}}
	case "public", "default":
		np.Egress = []networkingv1.NetworkPolicyEgressRule{dnsRule(), {To: []networkingv1.NetworkPolicyPeer{
			{IPBlock: &networkingv1.IPBlock{CIDR: "0.0.0.0/0", Except: privateRanges4}},
			{IPBlock: &networkingv1.IPBlock{CIDR: "::/0", Except: privateRanges6}},
		}}}
	default: // allow-list: the names and their DNS in the Cilium policy
		if o.Egress == EgressNone {
			np.Egress = []networkingv1.NetworkPolicyEgressRule{dnsRule()}
		}
	}
	return np
}

// CiliumNetworkPolicy is the part of cilium.io/v2's CiliumNetworkPolicy
// the export writes. Cilium's own Go module would bring the whole of
// Cilium into the build for six fields, so these are declared here.
type CiliumNetworkPolicy struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Spec       CiliumPolicySpec  `json:"spec"`
}

// CiliumPolicySpec selects the project's pods and lists their egress.
type CiliumPolicySpec struct {
	EndpointSelector metav1.LabelSelector `json:"endpointSelector"`
	Egress           []CiliumEgressRule   `json:"egress"`
}

// CiliumEgressRule is one egress rule: to endpoints or to names.
type CiliumEgressRule struct {
	ToEndpoints []metav1.LabelSelector `json:"toEndpoints,omitempty"`
	ToFQDNs     []FQDNSelector         `json:"toFQDNs,omitempty"`
	ToPorts     []CiliumPortRule       `json:"toPorts,omitempty"`
}

// FQDNSelector is a name or a pattern (* for one or more labels).
type FQDNSelector struct {
	MatchName    string `json:"matchName,omitempty"`
	MatchPattern string `json:"matchPattern,omitempty"`
}

// CiliumPortRule is ports and, for DNS, the rule that sends queries
// through Cilium's DNS proxy (which is how toFQDNs learns addresses).
type CiliumPortRule struct {
	Ports []CiliumPort   `json:"ports"`
	Rules *CiliumL7Rules `json:"rules,omitempty"`
}

// CiliumPort is a port and protocol (TCP, UDP or ANY).
type CiliumPort struct {
	Port     string `json:"port"`
	Protocol string `json:"protocol"`
}

// CiliumL7Rules are the DNS rules of a port rule.
type CiliumL7Rules struct {
	DNS []FQDNSelector `json:"dns"`
}

// ciliumPolicy is the allow list as names, or nil when the folder has no
// allow list.
func ciliumPolicy(src *Source, o Options) *CiliumNetworkPolicy {
	if o.Egress != EgressCilium || src.Network.Policy != "allow-list" || len(src.Network.Allow) == 0 {
		return nil
	}
	var names []FQDNSelector
	for _, h := range src.Network.Allow {
		h = strings.ToLower(strings.TrimSuffix(h, "."))
		if strings.HasPrefix(h, "*.") {
			names = append(names, FQDNSelector{MatchPattern: h})
		} else {
			names = append(names, FQDNSelector{MatchName: h})
		}
	}
	m := meta(src, src.Name+"-egress")
	return &CiliumNetworkPolicy{
		APIVersion: "cilium.io/v2", Kind: "CiliumNetworkPolicy", Metadata: m,
		Spec: CiliumPolicySpec{
			EndpointSelector: metav1.LabelSelector{MatchLabels: map[string]string{ProjectLabel: src.Name}},
			Egress: []CiliumEgressRule{
				{
					ToEndpoints: []metav1.LabelSelector{{MatchLabels: map[string]string{
						"k8s:io.kubernetes.pod.namespace": "kube-system", "k8s:k8s-app": "kube-dns"}}},
					ToPorts: []CiliumPortRule{{Ports: []CiliumPort{{Port: "53", Protocol: "ANY"}},
						Rules: &CiliumL7Rules{DNS: names}}},
				},
				{ToFQDNs: names},
			},
		},
	}
}

// egressNotes say where the folder's network policy is enforced and where
// it is not.
func egressNotes(src *Source, o Options) []string {
	notes := []string{"egress: the template's NetworkPolicy is enforced only by a CNI that implements NetworkPolicy (Calico, Cilium, …); on one that does not (flannel alone), the pod reaches everything"}
	nw := src.Network
	switch {
	case nw.Policy == "allow-list" && o.Egress == EgressCilium:
		notes = append(notes, fmt.Sprintf("egress: the allow list (%s) is enforced only by Cilium, through the CiliumNetworkPolicy %s-egress (toFQDNs; DNS answered for those names only, through Cilium's DNS proxy, which it assumes at kube-system/k8s-app=kube-dns); a cluster without Cilium refuses that object: export with --egress none there",
			strings.Join(nw.Allow, ", "), src.Name))
	case nw.Policy == "allow-list":
		notes = append(notes, fmt.Sprintf("egress: --egress none: the allow list (%s) is not enforced: the NetworkPolicy lets the pod reach DNS and nothing else, so the agent cannot reach its provider until your CNI's own FQDN policy allows those names", strings.Join(nw.Allow, ", ")))
	case nw.Policy == "public" || nw.Policy == "default":
		notes = append(notes, "egress: the public internet, private ranges blocked by ipBlock (as msb's public policy); DNS to the cluster's resolver answers any name")
	}
	if len(nw.Deny) > 0 {
		notes = append(notes, fmt.Sprintf("egress: the deny list (%s) is not enforced: a NetworkPolicy cannot name a host, and Cilium's deny rules take no names", strings.Join(nw.Deny, ", ")))
	}
	return notes
}

// secretNotes say which Secret to create and what the pod then holds.
func secretNotes(src *Source) []string {
	if len(src.Secrets) == 0 {
		return nil
	}
	var keys []string
	for _, s := range src.Secrets {
		keys = append(keys, s.Key)
	}
	return []string{
		fmt.Sprintf("secrets: create the Secret %s with the keys %s before applying, e.g. from the outer folder: kubectl create secret generic %s --from-env-file=secrets.env", SecretName(src.Name), strings.Join(keys, ", "), SecretName(src.Name)),
		"secrets: the pod holds the real values in its environment: there is no proxy that substitutes them, and nothing limits which host a value is sent to (asb boundary --target kubernetes)",
	}
}
