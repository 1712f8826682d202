// Package cluster is what asb-export does with a real cluster, through the
// user's kubeconfig and client-go: it applies an export as kubectl apply
// --server-side would (asb export kubernetes --apply), and runs a
// session's agent by the API's exec (asb kube agent). Only asb-export
// links it; asb links no Kubernetes package.
package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// FieldManager owns the fields asb applies (server-side apply).
const FieldManager = "asb"

// Client is one cluster and namespace, from a kubeconfig.
type Client struct {
	Config    *rest.Config
	Namespace string
	Dynamic   dynamic.Interface
	Core      kubernetes.Interface
	Discovery discovery.DiscoveryInterface
}

// FromKubeconfig is the cluster of the user's kubeconfig ($KUBECONFIG or
// ~/.kube/config, its current context), in the context's namespace
// (default when it names none), as kubectl finds them.
func FromKubeconfig() (*Client, error) {
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(), &clientcmd.ConfigOverrides{})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("no cluster to reach: %w (kubectl config current-context says which one kubectl would use)", err)
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, fmt.Errorf("the kubeconfig's namespace: %w", err)
	}
	return New(cfg, ns)
}

// New is a Client of cfg in namespace ns.
func New(cfg *rest.Config, ns string) (*Client, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	core, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Client{Config: cfg, Namespace: ns, Dynamic: dyn, Core: core, Discovery: core.Discovery()}, nil
}

// apply applies u server-side, as kubectl apply --server-side does: asb
// owns the fields it sets (taking them over from another manager), and a
// field the API does not know is an error (strict field validation, as
// kubectl's --validate=strict), never silently dropped.
func (c *Client) apply(ctx context.Context, gvr schema.GroupVersionResource, u *unstructured.Unstructured) error {
	data, err := u.MarshalJSON()
	if err != nil {
		return err
	}
	force := true
	_, err = c.Dynamic.Resource(gvr).Namespace(c.Namespace).Patch(ctx, u.GetName(), types.ApplyPatchType, data,
		metav1.PatchOptions{FieldManager: FieldManager, Force: &force, FieldValidation: "Strict"})
	return err
}

// resourceOf is the resource that serves apiVersion and kind, or an error
// that says which CRD the cluster lacks.
func (c *Client) resourceOf(apiVersion, kind string) (schema.GroupVersionResource, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return schema.GroupVersionResource{}, err
	}
	list, err := c.Discovery.ServerResourcesForGroupVersion(apiVersion)
	if err != nil && !apierrors.IsNotFound(err) {
		return schema.GroupVersionResource{}, fmt.Errorf("ask the cluster for %s: %w", apiVersion, err)
	}
	if list != nil {
		for _, r := range list.APIResources {
			if r.Kind == kind && !strings.Contains(r.Name, "/") {
				return gv.WithResource(r.Name), nil
			}
		}
	}
	return schema.GroupVersionResource{}, &MissingError{APIVersion: apiVersion, Kind: kind}
}

// MissingError is a kind the cluster does not serve: its CRD is not
// installed.
type MissingError struct{ APIVersion, Kind string }

func (e *MissingError) Error() string {
	why := "its CRD is not installed"
	switch {
	case strings.HasPrefix(e.APIVersion, "cilium.io/"):
		why += ": the cluster does not run Cilium; export with --egress none (and enforce the allow list with your CNI's own FQDN policy)"
	case strings.Contains(e.APIVersion, "agents.x-k8s.io"):
		why += ": install agent-sandbox with its extensions (its CRDs, and its controller run with --extensions), version v1beta1 (asb is tested with v1.0.1)"
	}
	return fmt.Sprintf("the cluster serves no %s %s: %s", e.APIVersion, e.Kind, why)
}

// unstructuredOf is obj (an API type of the export) as the dynamic client
// sends it.
func unstructuredOf(obj any) (*unstructured.Unstructured, error) {
	js, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(js); err != nil {
		return nil, err
	}
	unstructured.RemoveNestedField(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	if u.GetName() == "" || u.GetKind() == "" {
		return nil, errors.New("an object without a kind or name")
	}
	return u, nil
}
