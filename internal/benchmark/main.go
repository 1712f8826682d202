// Command benchmark is `make bench`: it times asb as users run it, whole
// exec'd processes (Go's package initialisation included, which in-process
// benchmarks miss), each side by side with its floor in one run, and
// prints medians and ratios against the budgets of docs/startup.md.
//
//	go run ./internal/benchmark [-n 31] [-task PATH] [-only NAME]
//
// -task is the standalone go-task binary to hold `asb task --list` against
// (make bench installs go-task v3.54.0 as released, with its own module's
// dependencies, into .tools/bench/bin).
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"time"
)

func main() {
	n := flag.Int("n", 31, "runs of each command (interleaved with its floor)")
	taskBin := flag.String("task", "", "the standalone go-task binary (floor of asb task --list)")
	only := flag.String("only", "", "run only the lines whose name contains this, e.g. -only init")
	flag.Parse()
	if err := run(*n, *taskBin, *only); err != nil {
		fmt.Fprintln(os.Stderr, "benchmark:", err)
		os.Exit(1)
	}
}

// sample is what runs of one command took.
type sample struct {
	med, min time.Duration
	rssKiB   int64 // the median of the peak memory
}

// pair is one line of the report: a command of asb and its floor (and,
// for a budget of two terms, a third command timed with them).
type pair struct {
	name       string
	asb, floor cmd
	third      *cmd
	budget     string
	ok         func(a, f, x sample) bool
	// note prints the line's own figures instead of the ratio's.
	note func(a, f, x sample) string
}

// errOver is a run in which a line was over its budget.
var errOver = errors.New("over budget (the lines marked OVER)")

func run(n int, taskBin, only string) error {
	w, err := newWorkspace()
	if err != nil {
		return err
	}
	defer w.close()
	pairs, err := w.pairs(taskBin)
	if err != nil {
		return err
	}
	fmt.Printf("asb as users run it: whole processes, median of %d runs each, interleaved with the floor\n", n)
	fmt.Printf("(%s/%s, %d CPUs, %s, load %s)\n\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), loadavg())
	fmt.Printf("%-30s %9s %9s %9s %9s  %s\n", "command", "asb", "floor", "ratio", "asb RSS", "budget")
	over := false
	for _, p := range pairs {
		if !strings.Contains(p.name, only) {
			continue
		}
		if p.floor.argv == nil {
			fmt.Printf("%-30s %s\n", p.name, p.budget)
			continue
		}
		cmds := []cmd{p.asb, p.floor}
		if p.third != nil {
			cmds = append(cmds, *p.third)
		}
		got, err := measure(n, cmds...)
		if err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
		got = append(got, sample{})
		a, f, x := got[0], got[1], got[2]
		verdict := "ok"
		if !p.ok(a, f, x) {
			verdict, over = "OVER", true
		}
		figures := fmt.Sprintf("%8.2fx", float64(a.med)/float64(f.med))
		if p.note != nil {
			figures = p.note(a, f, x)
		}
		fmt.Printf("%-30s %9s %9s %s %7.1fMi  %s: %s\n", p.name, ms(a.med), ms(f.med),
			figures, float64(a.rssKiB)/1024, p.budget, verdict)
	}
	if strings.Contains("fleet commands", only) {
		ok, err := w.fleetReport()
		if err != nil {
			return err
		}
		over = over || !ok
	}
	if over {
		return errOver
	}
	return nil
}

// measure runs each of cmds n times, in turn, so that all see the same
// machine, and returns their samples.
func measure(n int, cmds ...cmd) ([]sample, error) {
	ts := make([][]time.Duration, len(cmds))
	rs := make([][]int64, len(cmds))
	for i := range n {
		for j, c := range cmds {
			d, rss, err := c.run(i)
			if err != nil {
				return nil, err
			}
			ts[j] = append(ts[j], d)
			rs[j] = append(rs[j], rss)
		}
	}
	out := make([]sample, len(cmds))
	for j := range cmds {
		out[j] = summarize(ts[j], rs[j])
	}
	return out, nil
}

// loadavg is the machine's load over the last minute, as /proc says.
func loadavg() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(raw))[0]
}

func summarize(ts []time.Duration, rss []int64) sample {
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	sort.Slice(rss, func(i, j int) bool { return rss[i] < rss[j] })
	return sample{med: ts[len(ts)/2], min: ts[0], rssKiB: rss[len(rss)/2]}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond)) }
