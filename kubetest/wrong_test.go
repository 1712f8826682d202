package kubetest

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	extv1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/kubeexport"
	"github.com/agents-sandbox/asb/kubeexport/cluster"
	"github.com/agents-sandbox/asb/kubetest/controlplane"
	"github.com/agents-sandbox/asb/schema"
)

// A deliberately wrong export (a field the CRD lacks) is refused by the
// API server, and the apply says so.
func wrongExportFails(t *testing.T, k *cluster.Cluster, plane *controlplane.Plane) {
	ex, src := exported(t, folder(t, generator.DefaultOptions("pi", "wrong")), kubeexport.Options{})
	for i, o := range ex.Objects {
		if _, ok := o.Obj.(*extv1.SandboxTemplate); !ok {
			continue
		}
		js, _ := json.Marshal(o.Obj)
		var m map[string]any
		_ = json.Unmarshal(js, &m)
		m["spec"].(map[string]any)["idleTimeout"] = "30m" // no such field in v1beta1
		ex.Objects[i].Obj = m
	}
	var out bytes.Buffer
	err := k.Apply(context.Background(), ex, src, kubeexport.Options{RuntimeClass: "gvisor", Egress: kubeexport.EgressNone}, &out)
	if err == nil || !strings.Contains(err.Error(), ".spec.idleTimeout: field not declared in schema") {
		t.Fatalf("apply of a template with spec.idleTimeout: %v; want the API server's unknown field", err)
	}
}

// On a cluster without Cilium, --egress cilium applies nothing and says
// which CRD is missing and what to do.
func missingCRDIsNamed(t *testing.T, k *cluster.Cluster) {
	o := generator.DefaultOptions("pi", "cilium")
	ex, src := exported(t, folder(t, o), kubeexport.Options{Egress: kubeexport.EgressCilium})
	err := k.Apply(context.Background(), ex, src, kubeexport.Options{RuntimeClass: "gvisor", Egress: kubeexport.EgressCilium}, &bytes.Buffer{})
	t.Logf("asb export kubernetes --egress cilium --apply: %v", err)
	if err == nil || !strings.Contains(err.Error(), "nothing applied") || !strings.Contains(err.Error(), "cilium.io/v2 CiliumNetworkPolicy") || !strings.Contains(err.Error(), "--egress none") {
		t.Fatalf("apply with --egress cilium: %v; want the missing CRD named and --egress none offered", err)
	}
}

// asb kube agent claims a session the export did not list: its own claim,
// on its own branch, with shutdownTime from max_duration; the controllers
// make its pod.
func agentClaims(t *testing.T, k *cluster.Cluster, plane *controlplane.Plane, cs kubernetes.Interface) {
	o := generator.DefaultOptions("codex", "agent")
	o.Record = &schema.Record{Asb: "dev", Workspace: origin}
	dir := folder(t, o)
	ex, src := exported(t, dir, kubeexport.Options{})
	if err := k.Apply(context.Background(), ex, src, kubeexport.Options{RuntimeClass: "gvisor", Egress: kubeexport.EgressNone}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	src.Limits[schema.LimitMaxDuration] = "2h"
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	k2 := *k
	k2.Now = func() time.Time { return at }
	c, err := cluster.New(plane.Config, plane.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	name, err := k2.EnsureClaim(context.Background(), c, src, "carol", &log)
	if err != nil || name != "agent-carol" {
		t.Fatalf("claim %q: %v", name, err)
	}
	var claim extv1.SandboxClaim
	raw, err := cs.Discovery().RESTClient().Get().AbsPath("/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/" + plane.Namespace + "/sandboxclaims/agent-carol").DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &claim); err != nil {
		t.Fatal(err)
	}
	if l := claim.Spec.Lifecycle; l == nil || l.ShutdownTime == nil || !l.ShutdownTime.Time.Equal(at.Add(2*time.Hour)) || l.ShutdownPolicy != extv1.ShutdownPolicyRetain {
		t.Errorf("lifecycle %+v; want shutdownTime %s, Retain", claim.Spec.Lifecycle, at.Add(2*time.Hour))
	}
	t.Logf("asb kube agent --session carol (the claim):\n%s", log.String())
	pod := reconciled(t, plane, cs, "agent-carol")
	checkInit(t, pod, src, "carol")
	// A second call finds the claim and leaves it be.
	if n, err := k2.EnsureClaim(context.Background(), c, src, "carol", &log); err != nil || n != "agent-carol" {
		t.Errorf("again: %q %v", n, err)
	}
	_ = metav1.Now
}
