package cluster

import (
	"context"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	sandboxv1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
	extv1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"

	"github.com/agents-sandbox/asb/kubeexport"
)

// podWait bounds the wait for a session's pod to run (scheduling, pulling
// the image, the volumes).
const podWait = 10 * time.Minute

// Agent is asb kube agent: it claims the session's sandbox (a claim of its
// own, made as the export makes it, when it has none), waits for its pod,
// delivers the workspace when the pod waits for it, and runs the agent in
// the pod by the API's exec, on the user's terminal.
func (k *Cluster) Agent(ctx context.Context, dir string, src *kubeexport.Source, session string, std kubeexport.IO) error {
	c, err := k.client()
	if err != nil {
		return err
	}
	name, err := k.EnsureClaim(ctx, c, src, session, std.Err)
	if err != nil {
		return err
	}
	pod, err := c.waitPod(ctx, name, src, std.Err)
	if err != nil {
		return err
	}
	return c.exec(ctx, pod, src.Agent.Command, std)
}

// EnsureClaim makes the session's claim when it does not exist (the
// template and pool must: asb export kubernetes --apply), and returns its
// name.
func (k *Cluster) EnsureClaim(ctx context.Context, c *Client, src *kubeexport.Source, session string, log io.Writer) (string, error) {
	claim := kubeexport.Claim(src, session)
	claims := c.Dynamic.Resource(extv1.GroupVersion.WithResource("sandboxclaims")).Namespace(c.Namespace)
	if _, err := claims.Get(ctx, claim.Name, metav1.GetOptions{}); err == nil {
		return claim.Name, nil
	} else if !apierrors.IsNotFound(err) {
		return "", fmt.Errorf("read SandboxClaim %s: %w", claim.Name, err)
	}
	pools := c.Dynamic.Resource(extv1.GroupVersion.WithResource("sandboxwarmpools")).Namespace(c.Namespace)
	if _, err := pools.Get(ctx, claim.Spec.WarmPoolRef.Name, metav1.GetOptions{}); err != nil {
		return "", fmt.Errorf("the SandboxWarmPool %s is not in namespace %s (%v): apply the folder first: asb export kubernetes --apply", claim.Spec.WarmPoolRef.Name, c.Namespace, err)
	}
	u, err := unstructuredOf(claim)
	if err != nil {
		return "", err
	}
	if err := k.setShutdown(ctx, c, applied{gvr: extv1.GroupVersion.WithResource("sandboxclaims"), obj: u}, src); err != nil {
		return "", err
	}
	if err := c.apply(ctx, extv1.GroupVersion.WithResource("sandboxclaims"), u); err != nil {
		return "", fmt.Errorf("claim %s: %w", claim.Name, err)
	}
	fmt.Fprintf(log, "claimed %s (namespace %s)\n", claim.Name, c.Namespace)
	return claim.Name, nil
}

// PodOf is the pod of the claim's sandbox, "" while there is none yet.
func (c *Client) PodOf(ctx context.Context, claim string) (string, error) {
	u, err := c.Dynamic.Resource(extv1.GroupVersion.WithResource("sandboxclaims")).Namespace(c.Namespace).Get(ctx, claim, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	sb, _, _ := unstructured.NestedString(u.Object, "status", "sandbox", "name")
	if sb == "" {
		return "", nil
	}
	s, err := c.Dynamic.Resource(sandboxv1.GroupVersion.WithResource("sandboxes")).Namespace(c.Namespace).Get(ctx, sb, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if p := s.GetAnnotations()[sandboxv1.SandboxPodNameAnnotation]; p != "" {
		return p, nil
	}
	return sb, nil
}

// waitPod waits until the claim's pod runs its agent container, and
// delivers the workspace on the way when the init container waits for it.
func (c *Client) waitPod(ctx context.Context, claim string, src *kubeexport.Source, log io.Writer) (string, error) {
	deadline := time.Now().Add(podWait)
	said, delivered := "", false
	for {
		name, pod, err := c.pod(ctx, claim)
		if err != nil {
			return "", err
		}
		state := "waiting for the sandbox of " + claim
		if pod != nil {
			if running(pod.Status.ContainerStatuses, kubeexport.AgentContainer) {
				return name, nil
			}
			if why := stuck(pod); why != "" {
				return "", fmt.Errorf("the pod %s does not start: %s (kubectl describe pod %s)", name, why, name)
			}
			if !delivered && src.Workspace.URL != "" && running(pod.Status.InitContainerStatuses, kubeexport.InitContainer) {
				if err := c.deliver(ctx, name, src, log); err != nil {
					return "", err
				}
				delivered = true
			}
			state = fmt.Sprintf("pod %s: %s", name, pod.Status.Phase)
		}
		if state != said {
			fmt.Fprintln(log, state)
			said = state
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("%s after %s; kubectl describe sandboxclaim %s says why", state, podWait, claim)
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

func (c *Client) pod(ctx context.Context, claim string) (string, *corev1.Pod, error) {
	name, err := c.PodOf(ctx, claim)
	if err != nil || name == "" {
		return "", nil, err
	}
	p, err := c.Core.CoreV1().Pods(c.Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return name, nil, nil
	}
	return name, p, err
}

func running(st []corev1.ContainerStatus, name string) bool {
	for _, s := range st {
		if s.Name == name && s.State.Running != nil {
			return true
		}
	}
	return false
}

// stuck is why a pod will not start by itself: an image it cannot pull, a
// Secret or key it lacks, a finished pod; "" while it may yet.
func stuck(p *corev1.Pod) string {
	if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return "it has ended (" + string(p.Status.Phase) + ")"
	}
	for _, s := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
		if w := s.State.Waiting; w != nil {
			switch w.Reason {
			case "ErrImagePull", "ImagePullBackOff", "InvalidImageName", "CreateContainerConfigError", "CreateContainerError":
				return fmt.Sprintf("%s: %s: %s", s.Name, w.Reason, w.Message)
			}
		}
	}
	return ""
}
