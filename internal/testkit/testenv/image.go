package testenv

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// EnvImageCache names the folder where the real-image tests keep a podman
// store between runs (default /var/tmp/asb-test-cache): the Debian base and
// the agent's image layers, which cost a minute to build cold and a second
// warm. podman's own layer cache keys every step on its inputs (the
// Dockerfile's lines and the files they copy), so a changed toolchain/
// rebuilds from the first changed step on, and nothing stale is used.
const EnvImageCache = "ASB_TEST_IMAGE_CACHE"

// ImageCacheDir is the folder of EnvImageCache.
func ImageCacheDir() string {
	if d := os.Getenv(EnvImageCache); d != "" {
		return d
	}
	return "/var/tmp/asb-test-cache"
}

var cacheDriver struct {
	once   sync.Once
	driver string
	err    error
}

// CachedPodman returns the argv prefix of a rootful podman whose store
// persists under ImageCacheDir: overlay where this kernel and file system
// allow it (a no-op rebuild takes half a second), vfs else (every step
// copies the whole tree). Each driver has a store of its own, since podman
// pins a store to the driver that made it.
func CachedPodman(t testing.TB) []string {
	t.Helper()
	if skip(t) {
		return nil
	}
	p := podmanBin(t)
	argv := func(driver string) []string {
		return podmanArgv(p, driver, filepath.Join(ImageCacheDir(), "podman-"+driver))
	}
	cacheDriver.once.Do(func() {
		for _, d := range []string{"overlay", "vfs"} {
			if err := os.MkdirAll(filepath.Join(ImageCacheDir(), "podman-"+d, "tmp"), 0o700); err != nil {
				cacheDriver.err = err
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			_, stderr, err := RunErr(ctx, "", os.Environ(), nil, append(argv(d), "info", "--format", "{{.Store.GraphDriverName}}")...)
			cancel()
			if err == nil {
				cacheDriver.driver = d
				return
			}
			cacheDriver.err = fmt.Errorf("podman info (%s): %v: %s", d, err, bytes.TrimSpace(stderr))
		}
	})
	if cacheDriver.driver == "" {
		t.Fatalf("no podman storage driver works under %s: %v", ImageCacheDir(), cacheDriver.err)
	}
	return argv(cacheDriver.driver)
}

var runFlags struct {
	once  sync.Once
	flags []string
	why   string
}

// RunInImage runs argv in a new container of image (podman is the argv
// prefix of CachedPodman or Podman), with the extra `podman run` flags
// given, and returns its output. Where podman's default runtime cannot
// start a container (crun on hybrid cgroups; rlimits above the hard limits
// without CAP_SYS_RESOURCE), it uses runc with the host's own limits: the
// first call finds out which, once per test binary.
func RunInImage(t testing.TB, ctx context.Context, podman []string, image string, flags []string, argv ...string) (stdout, stderr []byte, err error) {
	t.Helper()
	runFlags.once.Do(func() {
		probe := append(append(append([]string{}, podman...), "run", "--rm", "--network", "none", image), "true")
		if _, e, err := RunErr(ctx, "", os.Environ(), nil, probe...); err != nil {
			runFlags.flags = []string{"--runtime", "runc",
				"--ulimit", "nofile=" + hardLimit(syscall.RLIMIT_NOFILE, 1<<20),
				"--ulimit", "nproc=" + hardLimit(6 /* RLIMIT_NPROC */, 32768)}
			runFlags.why = strings.TrimSpace(string(e))
		}
	})
	if runFlags.why != "" {
		t.Logf("podman run: the default runtime fails here (%s); using %s", runFlags.why, strings.Join(runFlags.flags, " "))
	}
	full := append(append([]string{}, podman...), "run", "--rm")
	full = append(append(append(full, runFlags.flags...), flags...), image)
	return RunErr(ctx, "", os.Environ(), nil, append(full, argv...)...)
}

// hardLimit is "N:N" for this process's hard limit of resource, at most
// most (podman runs containers at the limits it is given; above the hard
// limit that needs CAP_SYS_RESOURCE).
func hardLimit(resource int, most uint64) string {
	var l syscall.Rlimit
	n := most
	if err := syscall.Getrlimit(resource, &l); err == nil && l.Max < n {
		n = l.Max
	}
	s := strconv.FormatUint(n, 10)
	return s + ":" + s
}
