package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/cmd/asb/internal/root"
)

// How fast is `asb init` next to copying a ready-made outer folder? The
// benchmarks below lay down one outer folder per iteration, each in a fresh
// folder, git repository included:
//
//	BenchmarkInit          root.Main in this process: render, atomic write, git init
//	BenchmarkInitExec      the asb binary as a user runs it (this test binary, as asb)
//	BenchmarkCopyExample   cp -a examples/opencode, then git init (both exec'd)
//	BenchmarkInitVsCopy    the three interleaved in one run, reporting the ratios
//	                       init/cp and initexec/cp (target: init/cp <= 1.5)
//
//	go test ./cmd/asb -run '^$' -bench . -benchtime 50x -count 3

const exampleDir = "../../examples/opencode"

var benchIO = &cmdutil.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard}

func benchEnv(b *testing.B) {
	b.Helper()
	home := b.TempDir()
	b.Setenv("HOME", home)
	b.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	b.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(home, ".gitconfig"))
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("no git")
	}
	if _, err := os.Stat(filepath.Join(exampleDir, "sandbox.yaml")); err != nil {
		b.Skipf("no %s (run make examples): %v", exampleDir, err)
	}
}

func initOnce(b *testing.B, dir string) {
	if code := root.Main(context.Background(), []string{"init", "--agent", "opencode", "--name", "demo", dir}, benchIO); code != 0 {
		b.Fatalf("asb init exited %d", code)
	}
}

func initExecOnce(b *testing.B, dir string) {
	if out, err := exec.Command("asb", "init", "--agent", "opencode", "--name", "demo", dir).CombinedOutput(); err != nil {
		b.Fatalf("asb init: %v\n%s", err, out)
	}
}

func copyOnce(b *testing.B, dir string) {
	if out, err := exec.Command("cp", "-a", exampleDir, dir).CombinedOutput(); err != nil {
		b.Fatalf("cp: %v\n%s", err, out)
	}
	if out, err := exec.Command("git", "init", "--quiet", dir).CombinedOutput(); err != nil {
		b.Fatalf("git init: %v\n%s", err, out)
	}
}

func checkOuter(b *testing.B, dir string) {
	for _, f := range []string{"sandbox.yaml", "secrets.yaml", "toolchain/Dockerfile", ".git/HEAD"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			b.Fatalf("%s: %v", dir, err)
		}
	}
}

func bench(b *testing.B, once func(*testing.B, string)) {
	benchEnv(b)
	base := b.TempDir()
	for i := 0; b.Loop(); i++ {
		once(b, filepath.Join(base, strconv.Itoa(i)))
	}
	b.StopTimer()
	checkOuter(b, filepath.Join(base, "0"))
}

func BenchmarkInit(b *testing.B)        { bench(b, initOnce) }
func BenchmarkInitExec(b *testing.B)    { bench(b, initExecOnce) }
func BenchmarkCopyExample(b *testing.B) { bench(b, copyOnce) }

// BenchmarkInitVsCopy interleaves the three, so a busy machine slows each
// alike, and reports their ratios.
func BenchmarkInitVsCopy(b *testing.B) {
	benchEnv(b)
	base := b.TempDir()
	var tInit, tExec, tCopy time.Duration
	timed := func(d *time.Duration, once func(*testing.B, string), dir string) {
		start := time.Now()
		once(b, dir)
		*d += time.Since(start)
	}
	n := 0
	for b.Loop() {
		p := filepath.Join(base, strconv.Itoa(n))
		timed(&tInit, initOnce, p+"-init")
		timed(&tExec, initExecOnce, p+"-exec")
		timed(&tCopy, copyOnce, p+"-cp")
		n++
	}
	for _, s := range []string{"-init", "-exec", "-cp"} {
		checkOuter(b, filepath.Join(base, "0"+s))
	}
	b.ReportMetric(float64(tInit.Microseconds())/float64(n)/1000, "ms/init")
	b.ReportMetric(float64(tExec.Microseconds())/float64(n)/1000, "ms/initexec")
	b.ReportMetric(float64(tCopy.Microseconds())/float64(n)/1000, "ms/cp")
	b.ReportMetric(tInit.Seconds()/tCopy.Seconds(), "init/cp")
	b.ReportMetric(tExec.Seconds()/tCopy.Seconds(), "initexec/cp")
}
