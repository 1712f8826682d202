package runner

import (
	"errors"
	"net"
	"path/filepath"
	"testing"
)

func TestDetectBuilder(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "docker.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	missing := filepath.Join(t.TempDir(), "none.sock")
	on := func(tools ...string) func(string) (string, error) {
		return func(name string) (string, error) {
			for _, t := range tools {
				if t == name {
					return "/usr/bin/" + name, nil
				}
			}
			return "", errors.New("not found")
		}
	}
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	cases := []struct {
		name string
		env  map[string]string
		path []string
		want Builder
	}{
		{"explicit builder and args win", map[string]string{"ASB_BUILDER": "podman --storage-driver vfs", "ASB_BUILD_ARGS": "--isolation chroot", "DOCKER_HOST": "unix://" + sock},
			[]string{"docker", "podman"}, Builder{"podman --storage-driver vfs", "--isolation chroot"}},
		{"docker with a daemon", map[string]string{"DOCKER_HOST": "unix://" + sock}, []string{"docker", "podman"}, Builder{Command: "docker"}},
		{"docker client without a daemon falls back to podman", map[string]string{"DOCKER_HOST": "unix://" + missing}, []string{"docker", "podman"}, Builder{Command: "podman"}},
		{"a remote docker host counts as reachable", map[string]string{"DOCKER_HOST": "tcp://10.0.0.1:2376"}, []string{"docker"}, Builder{Command: "docker"}},
		{"podman only", map[string]string{"DOCKER_HOST": "unix://" + sock}, []string{"podman"}, Builder{Command: "podman"}},
		{"nothing: docker, whose error says it is missing", map[string]string{"DOCKER_HOST": "unix://" + missing}, nil, Builder{Command: "docker"}},
	}
	hybrid := []byte("32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n")
	unified := []byte("30 23 0:27 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := DetectBuilder(env(c.env), on(c.path...), func() []byte { return unified }); got != c.want {
				t.Fatalf("DetectBuilder = %+v, want %+v", got, c.want)
			}
		})
	}
	// On hybrid cgroups podman's RUN steps need chroot isolation; an explicit
	// ASB_BUILD_ARGS (even --isolation oci) and docker are left alone.
	for _, c := range []struct {
		name string
		env  map[string]string
		path []string
		want Builder
	}{
		{"podman on hybrid cgroups", map[string]string{"DOCKER_HOST": "unix://" + missing}, []string{"podman"}, Builder{"podman", "--isolation chroot"}},
		{"ASB_BUILDER podman with flags", map[string]string{"ASB_BUILDER": "/opt/bin/podman --root /r"}, nil, Builder{"/opt/bin/podman --root /r", "--isolation chroot"}},
		{"explicit args win", map[string]string{"ASB_BUILDER": "podman", "ASB_BUILD_ARGS": "--isolation oci"}, nil, Builder{"podman", "--isolation oci"}},
		{"docker is not podman", map[string]string{"DOCKER_HOST": "unix://" + sock}, []string{"docker", "podman"}, Builder{Command: "docker"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := DetectBuilder(env(c.env), on(c.path...), func() []byte { return hybrid }); got != c.want {
				t.Fatalf("DetectBuilder = %+v, want %+v", got, c.want)
			}
		})
	}
}
