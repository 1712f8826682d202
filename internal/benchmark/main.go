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

// pair is one line of the report: a command of asb and its floor.
type pair struct {
	name       string
	asb, floor cmd
	budget     string
	ok         func(a, f sample) bool
}

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
	fmt.Printf("(%s/%s, %d CPUs, %s)\n\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())
	fmt.Printf("%-30s %9s %9s %9s %9s  %s\n", "command", "asb", "floor", "ratio", "asb RSS", "budget")
	for _, p := range pairs {
		if !strings.Contains(p.name, only) {
			continue
		}
		if p.floor.argv == nil {
			fmt.Printf("%-30s %s\n", p.name, p.budget)
			continue
		}
		a, f, err := measure(n, p.asb, p.floor)
		if err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
		verdict := "ok"
		if !p.ok(a, f) {
			verdict = "OVER"
		}
		fmt.Printf("%-30s %9s %9s %8.2fx %7.1fMi  %s: %s\n", p.name, ms(a.med), ms(f.med),
			float64(a.med)/float64(f.med), float64(a.rssKiB)/1024, p.budget, verdict)
	}
	return nil
}

// measure runs a and b n times each, alternating, so that both see the
// same machine, and returns their samples.
func measure(n int, a, b cmd) (sample, sample, error) {
	var ta, tb []time.Duration
	var ra, rb []int64
	for i := range n {
		for _, c := range []struct {
			c  cmd
			ts *[]time.Duration
			rs *[]int64
		}{{a, &ta, &ra}, {b, &tb, &rb}} {
			d, rss, err := c.c.run(i)
			if err != nil {
				return sample{}, sample{}, err
			}
			*c.ts = append(*c.ts, d)
			*c.rs = append(*c.rs, rss)
		}
	}
	return summarize(ta, ra), summarize(tb, rb), nil
}

func summarize(ts []time.Duration, rss []int64) sample {
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	sort.Slice(rss, func(i, j int) bool { return rss[i] < rss[j] })
	return sample{med: ts[len(ts)/2], min: ts[0], rssKiB: rss[len(rss)/2]}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond)) }
