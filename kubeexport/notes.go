package kubeexport

import (
	"fmt"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/schema"
)

// limitNotes say where each of the folder's limits went, and why a limit
// with no counterpart in a pod was left out.
func limitNotes(src *Source) []string {
	var notes []string
	for _, l := range schema.Limits {
		v := src.Limits[l.Name]
		if v == "" {
			continue
		}
		switch l.Name {
		case schema.LimitTmpSize:
			notes = append(notes, fmt.Sprintf("limit tmp-size %s: /tmp is an emptyDir in memory (medium Memory, sizeLimit %s), counted against the pod's memory limit as msb's tmpfs is against the VM's", v, v))
		case schema.LimitRootDisk:
			notes = append(notes, fmt.Sprintf("limit root-disk %s: the agent container's ephemeral-storage request and limit (what it writes outside its volumes; the kubelet evicts the pod above it; the image itself is not counted)", v))
		case schema.LimitWorkspaceQuota:
			notes = append(notes, fmt.Sprintf("limit workspace-quota %s: the size of each sandbox's workspace volume claim (home has %s)", v, volumeSize))
		case schema.LimitMaxDuration:
			notes = append(notes, fmt.Sprintf("limit max-duration %s: a claim's lifecycle.shutdownTime, an absolute time: asb export kubernetes --apply and asb kube agent set it to the time they create the claim plus %s; a file of this export has none (add it when you apply it yourself). On expiry the sandbox, its pod and its volumes are deleted; the claim stays", v, v))
		case schema.LimitIdleTimeout:
			notes = append(notes, fmt.Sprintf("limit idle-timeout %s: not exported. agent-sandbox sees no activity (no exec session, no attach), and its only lifecycle deletes the sandbox with its volumes, where msb's idle stop keeps the disks: a pod runs until its claim is deleted or expires (max-duration)", v))
		case schema.LimitContainerDisk:
			notes = append(notes, fmt.Sprintf("limit container-disk %s: not exported: an unprivileged pod runs no containers of its own (podman needs user namespaces and FUSE, which a restricted pod does not get)", v))
		}
	}
	return notes
}

// assumptionNotes are what the export takes for granted of the cluster and
// the image, each of which the user must make true.
func assumptionNotes(src *Source, o Options) []string {
	notes := []string{
		"namespace: the objects have none: they go into the namespace kubectl (or asb export --apply) uses; the pod passes the restricted Pod Security Standard, so the namespace may enforce it (pod-security.kubernetes.io/enforce=restricted)",
		"agent-sandbox: its CRDs and its controller with --extensions (SandboxTemplate, SandboxWarmPool, SandboxClaim) run in the cluster, at v1beta1 (tested with sigs.k8s.io/agent-sandbox v1.0.1)",
		"image: the toolchain image runs as uid 1000 (dev, as its Dockerfile creates it) and has sh and sleep (the container's command keeps the pod up; the agent runs by exec: asb kube agent, or kubectl exec -it POD -c agent -- " + shellWords(src.Agent.Command) + ")",
		"ingress: none; forward a port with kubectl port-forward, which the NetworkPolicy does not see",
	}
	if o.RuntimeClass != "none" {
		notes = append(notes, fmt.Sprintf("runtime class: the RuntimeClass %s exists (kubectl get runtimeclass); a pod that names a missing one is refused by the API server", o.RuntimeClass))
	} else {
		notes = append(notes, "runtime class: none: the pod is a plain container on the node's kernel, shared with every other pod")
	}
	if o.StorageClass == "" {
		notes = append(notes, "volumes: the cluster has a default StorageClass (else export with --storage-class NAME); the home and workspace volumes are deleted with their sandbox")
	}
	if src.Workspace.URL != "" {
		notes = append(notes, fmt.Sprintf("workspace: the pod reaches no git host: asb kube agent clones %s on your machine, with your credentials, and streams a git bundle into the init container %s by the API's exec; the pod waits for it (kubectl users: git bundle create - --all | kubectl exec -i POD -c %s -- sh -c 'cat > %s.part && mv %s.part %s')",
			src.Workspace.URL, initContainer, initContainer, WorkspaceBundle, WorkspaceBundle, WorkspaceBundle))
		notes = append(notes, fmt.Sprintf("sessions: each claim of a session sets %s=asb/NAME for the init container, which the template allows (envVarsInjectionPolicy: Allowed: a claim may add variables, not change the template's; whoever may create SandboxClaims in the namespace may so add variables to the agent's container too)", SessionBranchEnv))
	}
	return notes
}

// shellWords joins a command for a note, each word quoted when needed.
func shellWords(cmd []string) string {
	out := ""
	for i, w := range cmd {
		if i > 0 {
			out += " "
		}
		out += generator.ShellQuote(w)
	}
	return out
}
