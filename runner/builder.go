package runner

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/agents-sandbox/asb/host"
)

// Builder says which image builder image:build and image:load use, and
// the extra arguments of its build command.
type Builder struct {
	Command   string // "docker", "podman", or a command with global flags ("podman --storage-driver vfs")
	BuildArgs string // extra `build` arguments ("--isolation chroot")
}

// DetectBuilder picks the builder: $ASB_BUILDER when set; else docker when
// it is on PATH and its daemon's socket exists ($DOCKER_HOST or
// /var/run/docker.sock; a docker client without a daemon cannot build);
// else podman when it is on PATH; else docker, whose error then says what
// is missing. The build arguments are $ASB_BUILD_ARGS when set, else what
// podman needs on this host for RUN steps (host.PodmanBuildArgs, from
// mountinfo; nil reads /proc/self/mountinfo). It runs no process: the warm
// path stays cheap.
func DetectBuilder(getenv func(string) string, lookPath func(string) (string, error), mountinfo func() []byte) Builder {
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	if mountinfo == nil {
		mountinfo = func() []byte { b, _ := os.ReadFile("/proc/self/mountinfo"); return b }
	}
	b := Builder{Command: strings.TrimSpace(getenv("ASB_BUILDER")), BuildArgs: strings.TrimSpace(getenv("ASB_BUILD_ARGS"))}
	if b.Command == "" {
		_, docker := lookPath("docker")
		_, podman := lookPath("podman")
		switch {
		case docker == nil && dockerDaemon(getenv("DOCKER_HOST")):
			b.Command = "docker"
		case podman == nil:
			b.Command = "podman"
		default:
			b.Command = "docker"
		}
	}
	if prog, _, _ := strings.Cut(b.Command, " "); b.BuildArgs == "" && filepath.Base(prog) == "podman" {
		b.BuildArgs, _ = host.PodmanBuildArgs(mountinfo())
	}
	return b
}

// dockerDaemon reports whether a docker daemon's socket is there. A
// non-unix DOCKER_HOST (tcp://, ssh://) is taken as reachable.
func dockerDaemon(host string) bool {
	sock := "/var/run/docker.sock"
	if host != "" {
		p, ok := strings.CutPrefix(host, "unix://")
		if !ok {
			return true
		}
		sock = p
	}
	fi, err := os.Stat(sock)
	return err == nil && fi.Mode().Type() == fs.ModeSocket
}
