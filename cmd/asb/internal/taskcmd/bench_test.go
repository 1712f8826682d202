package taskcmd_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/testkit/testenv"
)

// buildAsb compiles asb and asb-task, as a user runs them, once per test
// binary.
func buildAsb(b testing.TB) string { return testenv.BuildAsb(b) }

// standaloneTask finds the go-task binary of the version asb embeds
// (make tools installs it in .tools/bin).
func standaloneTask(b *testing.B) string {
	b.Helper()
	for _, p := range []string{filepath.Join(os.Getenv("ASB_TOOLS_DIR"), "bin", "task"), "../../../../.tools/bin/task"} {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			abs, _ := filepath.Abs(p)
			return abs
		}
	}
	if p, err := exec.LookPath("task"); err == nil {
		return p
	}
	b.Skip("no standalone task binary: run make tools")
	return ""
}

func timeRun(b *testing.B, dir string, argv ...string) time.Duration {
	b.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%v: %v\n%s", argv, err, out)
	}
	return time.Since(start)
}

// BenchmarkTaskList runs `asb task --list` and the standalone `task --list`
// of the same go-task version on the same Taskfile, alternately in one run,
// and reports their ratio (target: at most 1.2).
func BenchmarkTaskList(b *testing.B) {
	asb := buildAsb(b)
	tsk := standaloneTask(b)
	dir := newSandbox(b, generator.DefaultOptions("opencode", "demo")).dir
	timeRun(b, dir, asb, "task", "--list") // warm the page cache
	timeRun(b, dir, tsk, "--list")
	var tAsb, tTask time.Duration
	b.ResetTimer()
	for range b.N {
		tAsb += timeRun(b, dir, asb, "task", "--list")
		tTask += timeRun(b, dir, tsk, "--list")
	}
	b.ReportMetric(float64(tAsb.Microseconds())/float64(b.N)/1000, "asb-ms/op")
	b.ReportMetric(float64(tTask.Microseconds())/float64(b.N)/1000, "task-ms/op")
	b.ReportMetric(float64(tAsb)/float64(tTask), "asb/task")
}

// BenchmarkWarmAgent measures what asb adds to a warm `asb task agent`
// (reading the Taskfile, the identity, the two status checks) over the
// exec alone, with the stand-in msb: only asb's own cost shows.
func BenchmarkWarmAgent(b *testing.B) {
	asb := buildAsb(b)
	s := newSandbox(b, generator.DefaultOptions("opencode", "demo"))
	timeRun(b, s.dir, asb, "task", "agent") // cold: build, load, create
	vm := s.identity().VM
	var tAsb, tExec time.Duration
	b.ResetTimer()
	for range b.N {
		tAsb += timeRun(b, s.dir, asb, "task", "--silent", "agent")
		tExec += timeRun(b, s.dir, "msb", "exec", "-t", "-u", "dev", "-w", "/workspace", vm, "--", "opencode")
	}
	b.ReportMetric(float64(tAsb.Microseconds())/float64(b.N)/1000, "warm-agent-ms/op")
	b.ReportMetric(float64(tExec.Microseconds())/float64(b.N)/1000, "exec-ms/op")
	b.ReportMetric(float64((tAsb-tExec).Microseconds())/float64(b.N)/1000, "overhead-ms/op")
}
