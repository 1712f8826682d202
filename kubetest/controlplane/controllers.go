package controlplane

import (
	"bytes"
	"context"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/agent-sandbox/controllers"
	extv1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"
	extcontrollers "sigs.k8s.io/agent-sandbox/extensions/controllers"
	"sigs.k8s.io/agent-sandbox/extensions/controllers/queue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// startControllers runs agent-sandbox's controllers as its
// agent-sandbox-controller runs them with --extensions (the Sandbox,
// SandboxClaim, SandboxTemplate and SandboxWarmPool reconcilers, its
// cache's transforms), without leader election, metrics or probes.
func startControllers(ctx context.Context, t *testing.T, cfg *rest.Config, log *Log) error {
	ctrl.SetLogger(zap.New(zap.WriteTo(log), zap.UseDevMode(false)))
	scheme := controllers.Scheme
	if err := extv1.AddToScheme(scheme); err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache: cache.Options{DefaultTransform: cache.TransformStripManagedFields(),
			ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: {Transform: controllers.PodCacheTransform}}},
	})
	if err != nil {
		return err
	}
	tracer := noTracing{}
	if err := (&controllers.SandboxReconciler{Client: mgr.GetClient(), Scheme: mgr.GetScheme(),
		Recorder: mgr.GetEventRecorder("sandbox-controller"), Tracer: tracer, ClusterDomain: "cluster.local",
	}).SetupWithManager(mgr, 4); err != nil {
		return wrap("Sandbox", err)
	}
	if err := (&extcontrollers.SandboxClaimReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Scheme: mgr.GetScheme(),
		WarmSandboxQueue: queue.NewSimpleSandboxQueue(), Recorder: mgr.GetEventRecorder("sandboxclaim-controller"), Tracer: tracer,
	}).SetupWithManager(mgr, 4); err != nil {
		return wrap("SandboxClaim", err)
	}
	if err := (&extcontrollers.SandboxTemplateReconciler{Client: mgr.GetClient(), Scheme: mgr.GetScheme(),
		Recorder: mgr.GetEventRecorder("sandboxtemplate-controller"), Tracer: tracer,
	}).SetupWithManager(mgr, 1); err != nil {
		return wrap("SandboxTemplate", err)
	}
	if err := (&extcontrollers.SandboxWarmPoolReconciler{Client: mgr.GetClient(), Scheme: mgr.GetScheme(),
		MaxBatchSize: 300, EnableWarmPoolEviction: true, Recorder: mgr.GetEventRecorder("sandboxwarmpool-controller"),
		ReadinessGracePeriod: extcontrollers.DefaultWarmPoolReadinessGracePeriod, UnschedulableRecheckInterval: extcontrollers.DefaultUnschedulableRecheckInterval,
	}).SetupWithManager(mgr, 1); err != nil {
		return wrap("SandboxWarmPool", err)
	}
	ctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Logf("controllers: %v", err)
		}
	})
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return wrap("cache", context.Cause(ctx))
	}
	return nil
}

// noTracing is agent-sandbox's tracer interface (its internal/metrics
// Instrumenter) doing nothing, as its controller runs without
// --enable-tracing.
type noTracing struct{}

func (noTracing) StartSpan(ctx context.Context, _ metav1.Object, _ string, _ map[string]string) (context.Context, func()) {
	return ctx, func() {}
}
func (noTracing) GetTraceContext(context.Context) string              { return "" }
func (noTracing) AddEvent(context.Context, string, map[string]string) {}
func (noTracing) IsRecording(context.Context) bool                    { return false }

// Log keeps what the controllers log, for a failing test's message.
type Log struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// Tail is the last n bytes of the log.
func (l *Log) Tail(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buf.Bytes()
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
