package host

import (
	"bufio"
	"bytes"
	"strings"
)

// PodmanBuildArgs returns the `podman build` flags RUN steps need on a host
// with the given /proc/self/mountinfo, and why ("" and "" when podman's
// default isolation works).
//
// On a hybrid cgroup layout (cgroup v1 controllers and a cgroup2 mount side
// by side, as on many CI and cloud VMs) crun, podman's default OCI runtime,
// refuses every container: "cgroups in hybrid mode not supported, drop all
// controllers from cgroupv2". Chroot isolation runs RUN steps without an OCI
// runtime, which is enough to build an image.
func PodmanBuildArgs(mountinfo []byte) (args, why string) {
	v1, v2 := false, false
	sc := bufio.NewScanner(bytes.NewReader(mountinfo))
	for sc.Scan() {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER
		_, after, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		switch fstype, _, _ := strings.Cut(after, " "); fstype {
		case "cgroup":
			v1 = true
		case "cgroup2":
			v2 = true
		}
	}
	if v1 && v2 {
		return "--isolation chroot", "hybrid cgroups (v1 controllers beside a cgroup2 mount): crun cannot run RUN steps, chroot isolation can"
	}
	return "", ""
}
