package runner

import (
	"os/exec"
	"strings"
)

// Builder says which image builder image:build and image:load use, and
// the extra arguments of its build command.
type Builder struct {
	Command   string // "docker", "podman", or a command with global flags ("podman --storage-driver vfs")
	BuildArgs string // extra `build` arguments ("--isolation chroot")
}

// DetectBuilder picks the builder: $ASB_BUILDER (and $ASB_BUILD_ARGS) when
// set, else docker when it is on PATH, else podman.
func DetectBuilder(getenv func(string) string, lookPath func(string) (string, error)) Builder {
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	b := Builder{Command: strings.TrimSpace(getenv("ASB_BUILDER")), BuildArgs: strings.TrimSpace(getenv("ASB_BUILD_ARGS"))}
	if b.Command == "" {
		b.Command = "podman"
		if _, err := lookPath("docker"); err == nil {
			b.Command = "docker"
		}
	}
	return b
}
