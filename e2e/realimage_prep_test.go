package e2e

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/internal/testkit/testenv"
)

// realImagePrep is the real image's build on this host (podman: the Debian
// base from packages, the toolchain, then podman save), started beside the
// first guest session, the boot one, when this test binary runs the real
// image's session too. The chain of guest sessions, the run's longest, then
// does not wait for it: on a machine with cold caches it took 285 s after
// the boot session (docs/testing.md, cold run 1), and 24 s warm. It runs at
// the rest's priority (nice +10 from the guests' -10 in make test), so that
// it does not slow the boot session's guest.
var realImagePrep struct {
	once sync.Once
	done chan struct{}
	dir  string // the folder and image.tar; removed by TestMain
	a    imageFolder
	err  error
}

// startRealImagePrep starts the build once per test binary. The folder is
// made here (asb init: quick); the build and the save run in the background.
func startRealImagePrep(t *testing.T) {
	t.Helper()
	realImagePrep.once.Do(func() {
		p := &realImagePrep
		p.done = make(chan struct{})
		// Until the build starts, a skip or a failure here (t's, which
		// ends this goroutine) leaves an error, never a wait.
		p.err = errors.New("it did not start (see the test that started it)")
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
		started := false
		defer func() {
			if !started {
				cancel()
				close(p.done)
			}
		}()
		podman := testenv.CachedPodman(t)
		asb := testenv.BuildAsb(t)
		dir, err := os.MkdirTemp("", "asb-realimage-")
		if err != nil {
			p.err = err
			return
		}
		p.dir = dir
		env := testenv.WithEnv(os.Environ(), "ASB_BUILDER="+strings.Join(podman, " "), "ASB_BUILD_ARGS=")
		p.a = newImageFolderIn(t, ctx, asb, dir, "e2e-real", env)
		p.err, started = nil, true
		go func() {
			defer close(p.done)
			defer cancel()
			for _, step := range []struct {
				dir  string
				argv []string
			}{
				{p.a.dir, []string{asb, "task", "image:build"}},
				{"", append(append([]string{}, podman...), "save", "-o", filepath.Join(dir, "image.tar"), p.a.id.BuildTag)},
			} {
				_, stderr, err := testenv.RunErr(ctx, step.dir, env, nil, append([]string{"nice", "-n", "10"}, step.argv...)...)
				if err != nil {
					p.err = fmt.Errorf("%s: %w\n%s", strings.Join(step.argv, " "), err, lastLines(string(stderr), 30))
					return
				}
			}
			cacheAs(podman, p.a.id.BuildTag, "opencode")
		}()
	})
}

// realImageBuilt waits for the build and returns its folder and image.tar.
func realImageBuilt(t *testing.T) (imageFolder, string) {
	t.Helper()
	startRealImagePrep(t)
	<-realImagePrep.done
	if realImagePrep.err != nil {
		t.Fatalf("the real image's build on this host: %v", realImagePrep.err)
	}
	return realImagePrep.a, filepath.Join(realImagePrep.dir, "image.tar")
}

// cleanRealImagePrep removes what the build left, once it has ended (TestMain).
func cleanRealImagePrep() {
	if realImagePrep.done != nil {
		<-realImagePrep.done
	}
	if realImagePrep.dir != "" {
		_ = os.RemoveAll(realImagePrep.dir)
	}
}

// runsRealImage: this test binary's -run and -skip select the real image's
// session (TestRealBootRealImage), as make test's guests do and make
// test-boot's do not.
func runsRealImage() bool {
	const name = "TestRealBootRealImage"
	match := func(flagName string) (bool, bool) {
		f := flag.Lookup(flagName)
		if f == nil || f.Value.String() == "" {
			return false, false
		}
		re, err := regexp.Compile(strings.Split(f.Value.String(), "/")[0])
		return err == nil && re.MatchString(name), true
	}
	run, set := match("test.run")
	if set && !run {
		return false
	}
	skip, _ := match("test.skip")
	return !skip
}

// The guests' run of make test starts the real image's build beside the
// boot session; make test-boot, which runs no real image, does not.
func TestRunsRealImageFollowsRunAndSkip(t *testing.T) {
	run, skip := flag.Lookup("test.run").Value.String(), flag.Lookup("test.skip").Value.String()
	defer func() {
		_ = flag.Set("test.run", run)
		_ = flag.Set("test.skip", skip)
	}()
	for _, c := range []struct {
		run, skip string
		want      bool
	}{
		{"", "", true},
		{"^TestReal(Boot|Net)", "", true},                      // make test's guests
		{"TestReal(BootRealImage|NetAgent)", "", true},         // make test-agent
		{"TestRealBoot([^R]|R[^e]|Re[^a]|Rea[^l])", "", false}, // make test-boot
		{"", "^TestReal(Boot|Net)", false},                     // make test's rest
		{"^TestRealNet", "", false},
	} {
		_ = flag.Set("test.run", c.run)
		_ = flag.Set("test.skip", c.skip)
		if got := runsRealImage(); got != c.want {
			t.Errorf("-run %q -skip %q: runsRealImage() = %v, want %v", c.run, c.skip, got, c.want)
		}
	}
}
