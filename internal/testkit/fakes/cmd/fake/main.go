// Command fake is the stand-in for msb, docker and podman (see package
// fakes), as a small binary of its own so each invocation starts fast.
package main

import "github.com/agents-sandbox/asb/internal/testkit/fakes"

func main() { fakes.Dispatch() }
