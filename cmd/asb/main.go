// Command asb runs a coding agent inside a microsandbox microVM that sees
// only the files, credentials and network its outer folder lists.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/cmd/asb/internal/root"
)

func main() {
	// A closed terminal (SIGHUP) ends a run as Ctrl-C does: the processes
	// it started are asked to end (internal/proc), not killed with it.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	code := root.Main(ctx, os.Args[1:], cmdutil.System())
	stop()
	os.Exit(code)
}
