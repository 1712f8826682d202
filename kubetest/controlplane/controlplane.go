// Package controlplane runs a Kubernetes control plane inside the test
// process: etcd (go.etcd.io/etcd/server/v3/embed), kube-apiserver as
// Kubernetes' own integration tests run it (k8s.io/kubernetes
// cmd/kube-apiserver/app/testing), agent-sandbox's published CRDs, and
// agent-sandbox's own controllers (sigs.k8s.io/agent-sandbox, the release
// asb's go.mod requires) with its extensions. There is no kubelet, no
// scheduler and no garbage collector: a pod is created and never runs.
package controlplane

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	kubeapiserver "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
)

// Plane is a running control plane.
type Plane struct {
	Config *rest.Config
	// Kubeconfig is a kubeconfig file for it, its context's namespace
	// Namespace, as a user's would be.
	Kubeconfig string
	Namespace  string
	// Log is what agent-sandbox's controllers logged, for a failing
	// test's message.
	Log *Log
}

// Start starts etcd, the API server, the CRDs and the controllers, all
// stopped when t ends. crdDir holds agent-sandbox's CRDs.
func Start(t *testing.T, crdDir string) *Plane {
	t.Helper()
	etcdURL := startEtcd(t)
	storage := storagebackend.NewDefaultConfig("/registry", nil)
	storage.Transport.ServerList = []string{etcdURL}
	opts := kubeapiserver.NewDefaultTestServerOptions()
	opts.DisableInvariantChecks = true
	server, err := kubeapiserver.StartTestServer(t, opts, []string{
		"--authorization-mode=RBAC", // the default: the test's client is a system:masters loopback
	}, storage)
	if err != nil {
		t.Fatalf("kube-apiserver: %v", err)
	}
	t.Cleanup(server.TearDownFn)
	p := &Plane{Config: rest.CopyConfig(server.ClientConfig), Namespace: "asb-test", Log: &Log{}}
	// JSON, as a client of a user's kubeconfig speaks (the test server's
	// own config asks for protobuf, which custom resources do not speak).
	p.Config.ContentType, p.Config.AcceptContentTypes = "", ""
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := installCRDs(ctx, p.Config, crdDir); err != nil {
		t.Fatalf("agent-sandbox's CRDs: %v", err)
	}
	if err := prepareNamespace(ctx, p.Config, p.Namespace); err != nil {
		t.Fatalf("namespace: %v", err)
	}
	if err := startControllers(ctx, t, p.Config, p.Log); err != nil {
		t.Fatalf("agent-sandbox's controllers: %v", err)
	}
	p.Kubeconfig = writeKubeconfig(t, p.Config, p.Namespace)
	return p
}

// startEtcd starts an etcd member on loopback ports of its own, in a
// folder of the test's, and returns its client URL.
func startEtcd(t *testing.T) string {
	t.Helper()
	cfg := embed.NewConfig()
	cfg.Dir = filepath.Join(t.TempDir(), "etcd")
	cfg.LogLevel = "error"
	cfg.UnsafeNoFsync = true // a test's data: nothing to keep after a crash
	client, peer := freeURL(t), freeURL(t)
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = cfg.Name + "=" + peer.String()
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatalf("etcd: %v", err)
	}
	t.Cleanup(e.Close)
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		t.Fatalf("etcd: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("etcd was not ready within 60 s")
	}
	return client.String()
}

// freeURL is an http URL on a loopback port nobody listens on now.
func freeURL(t *testing.T) url.URL {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return url.URL{Scheme: "http", Host: l.Addr().String()}
}

// writeKubeconfig is the plane as a user's kubeconfig file: the cluster,
// the test's credentials, the namespace of the current context.
func writeKubeconfig(t *testing.T, cfg *rest.Config, ns string) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["plane"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData,
		InsecureSkipTLSVerify: cfg.Insecure, TLSServerName: cfg.ServerName}
	kc.AuthInfos["test"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken, ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts["plane"] = &clientcmdapi.Context{Cluster: "plane", AuthInfo: "test", Namespace: ns}
	kc.CurrentContext = "plane"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}
