package main

import (
	"bufio"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agents-sandbox/asb/internal/testkit/testenv"
)

// initLine is a line of GODEBUG=inittrace=1: "init PKG @T ms, C ms clock, …".
var initLine = regexp.MustCompile(`^init (\S+) @[0-9.]+ ms, ([0-9.]+) ms clock`)

// TestInitCostsAreListed runs asb and asb-task with GODEBUG=inittrace=1 and
// fails when a package whose initialisation costs more than 1 ms (the least
// of 7 runs) is not in docs/init-allowlist.txt, or when a listed package is
// not linked any more: the start-up budget (docs/startup.md) cannot rot
// unseen. The 1 ms is the development machine's: on a slower or faster one
// it scales by how the allowlist's largest entries (3 ms and more, stable
// enough to calibrate with) measure here against their listed cost.
func TestInitCostsAreListed(t *testing.T) {
	asb := testenv.BuildAsb(t)
	engine := filepath.Join(filepath.Dir(asb), "asb-task")
	listed := readAllowlist(t)
	bins := []struct {
		name string
		argv []string
	}{{"asb", []string{asb, "version"}}, {"asb-task", []string{engine}}}
	least := map[string]map[string]float64{}
	for _, bin := range bins {
		least[bin.name] = leastInitCosts(t, bin.argv)
	}
	limit := max(1, speedFactor(listed, least))
	t.Logf("the 1 ms limit is %.2f ms on this machine", limit)
	for _, bin := range bins {
		for pkg, ms := range least[bin.name] {
			if _, ok := listed[bin.name+" "+pkg]; ms > limit && !ok {
				t.Errorf("%s links %s, whose init takes %.1f ms (the limit is %.2f ms here): make it lazy, keep it out, or list it with its cost in docs/init-allowlist.txt", bin.name, pkg, ms, limit)
			}
		}
		for entry := range listed {
			b, pkg, _ := strings.Cut(entry, " ")
			if _, linked := least[bin.name][pkg]; b == bin.name && !linked {
				t.Errorf("docs/init-allowlist.txt lists %s for %s, which no longer links it: remove the line", pkg, b)
			}
		}
	}
}

// leastInitCosts runs argv 7 times with inittrace on and returns each
// package's least init cost in ms.
func leastInitCosts(t *testing.T, argv []string) map[string]float64 {
	t.Helper()
	least := map[string]float64{}
	for range 7 {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
		out, _ := cmd.CombinedOutput() // asb-task alone exits 1, after its inits
		for _, l := range strings.Split(string(out), "\n") {
			m := initLine.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			ms, _ := strconv.ParseFloat(m[2], 64)
			if cur, ok := least[m[1]]; !ok || ms < cur {
				least[m[1]] = ms
			}
		}
	}
	if len(least) == 0 {
		t.Fatalf("%s printed no inittrace lines", filepath.Base(argv[0]))
	}
	return least
}

// speedFactor is how much slower (above 1) or faster this machine runs the
// allowlist's entries of 3 ms and more than the development machine did:
// the median of measured / listed (1 when none is linked).
func speedFactor(listed map[string]float64, least map[string]map[string]float64) float64 {
	var ratios []float64
	for entry, cost := range listed {
		b, pkg, _ := strings.Cut(entry, " ")
		if ms, ok := least[b][pkg]; ok && cost >= 3 {
			ratios = append(ratios, ms/cost)
		}
	}
	if len(ratios) == 0 {
		return 1
	}
	slices.Sort(ratios)
	return ratios[len(ratios)/2]
}

// readAllowlist returns each listed "binary package" with its listed cost
// in ms.
func readAllowlist(t *testing.T) map[string]float64 {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "docs", "init-allowlist.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		cost, err := strconv.ParseFloat(fields[2], 64)
		if err != nil {
			t.Fatalf("docs/init-allowlist.txt: %q: the third field is the cost in ms", sc.Text())
		}
		out[fields[0]+" "+fields[1]] = cost
	}
	return out
}

// TestAsbIsBuiltAsInstalled: the Makefile builds and installs asb with
// testenv.InstallEnv (no cgo), the tests' asb is built so too, and it is
// static: no dynamic loader to map before main (docs/startup.md).
func TestAsbIsBuiltAsInstalled(t *testing.T) {
	mk, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "\nASB_BUILD_ENV := " + testenv.InstallEnv + "\n"; !strings.Contains(string(mk), want) {
		t.Errorf("the Makefile does not set %q, the build testenv.InstallEnv says users get", strings.TrimSpace(want))
	}
	for _, target := range []string{"build", "install"} {
		if !regexp.MustCompile(`(?m)^` + target + `:\n\t\$\(ASB_BUILD_ENV\) \$\(GO\) ` + target + ` `).Match(mk) {
			t.Errorf("the Makefile's %s target does not run $(ASB_BUILD_ENV) $(GO) %s", target, target)
		}
	}
	if runtime.GOOS != "linux" {
		return
	}
	f, err := elf.Open(testenv.BuildAsb(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("the tests' asb is dynamically linked (it has an ELF interpreter): built without %s?", testenv.InstallEnv)
		}
	}
}
