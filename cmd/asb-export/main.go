// Command asb-export renders an outer folder as Kubernetes agent-sandbox
// resources, applies them (--apply) and runs a session's agent on the
// cluster (kube-agent): `asb export kubernetes` and `asb kube agent`
// resolve the folder and run this executable, which links Kubernetes' API
// types and client-go so that asb does not. It is not meant to be run by
// hand; install it beside asb.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/agents-sandbox/asb/kubeexport"
	"github.com/agents-sandbox/asb/kubeexport/cluster"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := kubeexport.MainWith(ctx, &cluster.Cluster{}, os.Args[1:], kubeexport.IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}, os.Getenv)
	stop()
	os.Exit(code)
}
