// Command asb-task is asb's go-task engine: `asb task` resolves the outer
// folder and this clone's names, then runs this executable with the run's
// spec. It is not meant to be run by hand; install it beside asb.
package main

import (
	"os"

	"github.com/agents-sandbox/asb/runner/engine"
)

func main() {
	os.Exit(engine.Main(os.Args[1:]))
}
