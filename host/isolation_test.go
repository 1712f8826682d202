package host

import "testing"

func TestPodmanBuildArgs(t *testing.T) {
	const (
		tmpfs  = "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
		v1     = "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
		v2sub  = "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
		v2root = "30 23 0:27 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate\n"
	)
	for _, tc := range []struct {
		name, mountinfo, want string
	}{
		{"hybrid (this CI)", tmpfs + v1 + v2sub, "--isolation chroot"},
		{"unified cgroup v2", v2root, ""},
		{"legacy cgroup v1 only", tmpfs + v1, ""},
		{"no cgroups mounted", "22 1 8:1 / / rw - ext4 /dev/vda rw\n", ""},
		{"garbage", "no separator here\n\x00", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := PodmanBuildArgs([]byte(tc.mountinfo))
			if got != tc.want || (got != "") != (why != "") {
				t.Errorf("PodmanBuildArgs = %q, %q; want %q with a reason when set", got, why, tc.want)
			}
		})
	}
}
