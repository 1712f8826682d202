// Command asb-export renders an outer folder as Kubernetes agent-sandbox
// resources: `asb export kubernetes` resolves the folder and runs this
// executable, which links Kubernetes' API types so that asb does not. It is
// not meant to be run by hand; install it beside asb.
package main

import (
	"os"

	"github.com/agents-sandbox/asb/kubeexport"
)

func main() {
	os.Exit(kubeexport.Main(os.Args[1:], os.Stdout, os.Stderr, os.Getenv))
}
