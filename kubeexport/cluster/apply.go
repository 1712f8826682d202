package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	extv1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"

	"github.com/agents-sandbox/asb/kubeexport"
	asbschema "github.com/agents-sandbox/asb/schema"
)

// Cluster is kubeexport.Cluster on the user's kubeconfig.
type Cluster struct {
	// Connect is the client (FromKubeconfig unless set: the tests' own
	// control plane).
	Connect func() (*Client, error)
	// ReconcileWait is how long Apply waits for agent-sandbox's controller
	// to answer (30 s unless set).
	ReconcileWait time.Duration
	// Now is the clock for a claim's shutdownTime.
	Now func() time.Time
}

func (k *Cluster) client() (*Client, error) {
	if k.Connect != nil {
		return k.Connect()
	}
	return FromKubeconfig()
}

// applied is one object of the export with the resource that serves it.
type applied struct {
	gvr schema.GroupVersionResource
	obj *unstructured.Unstructured
}

// Apply applies the export by server-side apply, in the export's order,
// once the cluster serves every kind of it (else one message per missing
// CRD, and nothing applied); then waits for agent-sandbox's controller to
// reconcile the pool, which says it runs.
func (k *Cluster) Apply(ctx context.Context, ex *kubeexport.Export, src *kubeexport.Source, o kubeexport.Options, out io.Writer) error {
	c, err := k.client()
	if err != nil {
		return err
	}
	objs, err := c.resolve(ex)
	if err != nil {
		return err
	}
	for _, a := range objs {
		if err := k.setShutdown(ctx, c, a, src); err != nil {
			return err
		}
		if err := c.apply(ctx, a.gvr, a.obj); err != nil {
			return fmt.Errorf("apply %s %s: %w", a.obj.GetKind(), a.obj.GetName(), err)
		}
		fmt.Fprintf(out, "%s/%s serverside-applied (namespace %s)\n", strings.ToLower(a.obj.GetKind()), a.obj.GetName(), c.Namespace)
	}
	if err := k.waitReconciled(ctx, c, src.Name); err != nil {
		return err
	}
	for _, n := range c.missingSecret(ctx, src) {
		fmt.Fprintln(out, "warning: "+n)
	}
	return nil
}

// resolve maps every object of the export to its resource; every kind the
// cluster lacks is named, and none is applied.
func (c *Client) resolve(ex *kubeexport.Export) ([]applied, error) {
	var out []applied
	var missing []error
	seen := map[string]bool{}
	for _, o := range ex.Objects {
		u, err := unstructuredOf(o.Obj)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", o.File, err)
		}
		gvr, err := c.resourceOf(u.GetAPIVersion(), u.GetKind())
		var me *MissingError
		if errors.As(err, &me) {
			if !seen[me.Error()] {
				missing = append(missing, err)
			}
			seen[me.Error()] = true
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, applied{gvr: gvr, obj: u})
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("nothing applied: %w", errors.Join(missing...))
	}
	return out, nil
}

// setShutdown gives a claim that does not exist yet its shutdownTime: the
// folder's max_duration from now (a claim that exists keeps its own).
func (k *Cluster) setShutdown(ctx context.Context, c *Client, a applied, src *kubeexport.Source) error {
	d := src.Limits[asbschema.LimitMaxDuration]
	if a.obj.GetKind() != "SandboxClaim" || d == "" {
		return nil
	}
	_, err := c.Dynamic.Resource(a.gvr).Namespace(c.Namespace).Get(ctx, a.obj.GetName(), metav1.GetOptions{})
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return err
	}
	dur, err := time.ParseDuration(d)
	if err != nil {
		return fmt.Errorf("max_duration %q: %w", d, err)
	}
	now := time.Now
	if k.Now != nil {
		now = k.Now
	}
	at := metav1.NewTime(now().Add(dur).UTC().Truncate(time.Second))
	return unstructured.SetNestedField(a.obj.Object, at.Format(time.RFC3339), "spec", "lifecycle", "shutdownTime")
}

// waitReconciled waits until the pool's status says agent-sandbox's
// extensions controller has seen its spec (observedGeneration).
func (k *Cluster) waitReconciled(ctx context.Context, c *Client, name string) error {
	wait := k.ReconcileWait
	if wait == 0 {
		wait = 30 * time.Second
	}
	gvr := extv1.GroupVersion.WithResource("sandboxwarmpools")
	deadline := time.Now().Add(wait)
	for {
		p, err := c.Dynamic.Resource(gvr).Namespace(c.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("read back SandboxWarmPool %s: %w", name, err)
		}
		seen, _, _ := unstructured.NestedInt64(p.Object, "status", "observedGeneration")
		if seen >= p.GetGeneration() {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("applied, but no agent-sandbox controller answered: SandboxWarmPool %s was not reconciled within %s; is agent-sandbox's controller running, with --extensions? (kubectl get pods -A -l app=agent-sandbox-controller)", name, wait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// missingSecret says what the pods will wait for: the Secret of the
// secrets, or keys it lacks (by name: no value is shown or kept).
func (c *Client) missingSecret(ctx context.Context, src *kubeexport.Source) []string {
	if len(src.Secrets) == 0 {
		return nil
	}
	name := kubeexport.SecretName(src.Name)
	s, err := c.Core.CoreV1().Secrets(c.Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return []string{fmt.Sprintf("the Secret %s does not exist: the pods wait for it; create it from the outer folder: kubectl create secret generic %s --from-env-file=secrets.env", name, name)}
	}
	if err != nil {
		return []string{fmt.Sprintf("the Secret %s could not be read (%v): the pods need it", name, err)}
	}
	var lack []string
	for _, r := range src.Secrets {
		if _, ok := s.Data[r.Key]; !ok && !slices.Contains(lack, r.Key) {
			lack = append(lack, r.Key)
		}
	}
	if len(lack) > 0 {
		return []string{fmt.Sprintf("the Secret %s lacks the keys %s: the pods wait for them", name, strings.Join(lack, ", "))}
	}
	return nil
}
