package testenv

import (
	"bytes"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// GuestLockup is how long the nested guest's kernel may report one of its
// CPUs stuck (its watchdog's "soft lockup - CPU#1 stuck for 52s!") before
// the session is taken for dead and killed. Seen once (CI, 2026-12-05):
// the vCPU thread of a microVM spun in the guest's kernel under emulated
// SVM from the 3rd minute on, nothing of the scenario's ran again, and the
// watchdog's report every half minute kept the session "alive" for 55
// minutes. No scenario of ours keeps a CPU from scheduling for seconds, let
// alone minutes: this is the emulation's, named so (emulationFault).
const GuestLockup = 2 * time.Minute

// kernelLine is a line of the guest kernel's own log on the console
// ("[  205.272188] watchdog: …"): the kernel's, not the scenario's.
var kernelLine = regexp.MustCompile(`^[\r\s]*\[\s*\d+\.\d+\]`)

// softLockup is the kernel watchdog's report of a CPU that did not
// schedule for N seconds.
var softLockup = regexp.MustCompile(`soft lockup - CPU#\d+ stuck for (\d+)s!.*`)

// guestWatch passes the guest's console on and reads it line by line: when
// the scenario last printed (a line of the kernel's is not the scenario's
// progress: a guest whose kernel spins on one CPU still prints its
// watchdog's reports while nothing else runs), and the longest soft
// lockup the kernel reported.
type guestWatch struct {
	w     io.Writer
	last  atomic.Int64 // unix nanoseconds of the scenario's last line
	mu    sync.Mutex
	line  []byte // the line being read, its first maxLine bytes
	stuck int    // seconds, the longest soft lockup reported
	what  string // that report
	// sysrqs counts the kernel's lines that answer a magic SysRq
	// (askKernel): "sysrq: Show Blocked State".
	sysrqs atomic.Int64
	// nmiSent and nmiAnswered are the CPUs the kernel sent an NMI for
	// their backtraces (SysRq l: "Sending NMI from CPU 1 to CPUs 0:")
	// and those that printed one ("NMI backtrace for cpu 0"), mu held.
	nmiSent, nmiAnswered map[int]bool
}

// nmiSending and nmiBacktrace are the kernel's lines of SysRq l.
var (
	nmiSending   = regexp.MustCompile(`Sending NMI from CPU \d+ to CPUs ([0-9,-]+)`)
	nmiBacktrace = regexp.MustCompile(`NMI backtrace for cpu (\d+)`)
)

// maxLine is how much of a line the watch keeps to judge it.
const maxLine = 512

func newGuestWatch(w io.Writer) *guestWatch {
	g := &guestWatch{w: w, nmiSent: map[int]bool{}, nmiAnswered: map[int]bool{}}
	g.touch()
	return g
}

// silentCPUs are the CPUs the kernel sent an NMI for their backtraces that
// printed none, in order.
func (g *guestWatch) silentCPUs() []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	var cs []int
	for c := range g.nmiSent {
		if !g.nmiAnswered[c] {
			cs = append(cs, c)
		}
	}
	slices.Sort(cs)
	return cs
}

// forgetNMIs clears what the last SysRq l showed, before another.
func (g *guestWatch) forgetNMIs() {
	g.mu.Lock()
	defer g.mu.Unlock()
	clear(g.nmiSent)
	clear(g.nmiAnswered)
}

// cpuList reads the kernel's list of CPUs ("0", "0-3", "0,2-3").
func cpuList(s string) []int {
	var cs []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			continue
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b-a > 1024 {
				continue
			}
		}
		for c := a; c <= b; c++ {
			cs = append(cs, c)
		}
	}
	return cs
}

func (g *guestWatch) touch() { g.last.Store(time.Now().UnixNano()) }

// quiet is how long ago the scenario last printed a line.
func (g *guestWatch) quiet() time.Duration { return time.Since(time.Unix(0, g.last.Load())) }

// lockup is the longest soft lockup the kernel reported, and its report.
func (g *guestWatch) lockup() (time.Duration, string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return time.Duration(g.stuck) * time.Second, g.what
}

func (g *guestWatch) Write(p []byte) (int, error) {
	g.mu.Lock()
	for rest := p; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			g.keep(rest)
			break
		}
		g.keep(rest[:i])
		g.judge()
		rest = rest[i+1:]
	}
	g.mu.Unlock()
	return g.w.Write(p)
}

func (g *guestWatch) keep(b []byte) {
	if n := maxLine - len(g.line); n > 0 {
		g.line = append(g.line, b[:min(n, len(b))]...)
	}
}

// judge reads the line just ended (mu held).
func (g *guestWatch) judge() {
	l := g.line
	g.line = g.line[:0]
	if !kernelLine.Match(l) || bytes.Contains(l, []byte("@@asb ")) {
		g.touch()
		return
	}
	if bytes.Contains(l, []byte("] sysrq: ")) {
		g.sysrqs.Add(1)
	}
	if m := nmiSending.FindSubmatch(l); m != nil {
		for _, c := range cpuList(string(m[1])) {
			g.nmiSent[c] = true
		}
	}
	if m := nmiBacktrace.FindSubmatch(l); m != nil {
		if c, err := strconv.Atoi(string(m[1])); err == nil {
			g.nmiAnswered[c] = true
		}
	}
	if m := softLockup.FindSubmatch(l); m != nil {
		if n, err := strconv.Atoi(string(m[1])); err == nil && n > g.stuck {
			g.stuck, g.what = n, string(bytes.TrimSpace(m[0]))
		}
	}
}
