package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
// unseen.
func TestInitCostsAreListed(t *testing.T) {
	asb := testenv.BuildAsb(t)
	engine := filepath.Join(filepath.Dir(asb), "asb-task")
	listed := readAllowlist(t)
	for _, bin := range []struct {
		name string
		argv []string
	}{{"asb", []string{asb, "version"}}, {"asb-task", []string{engine}}} {
		least := map[string]float64{}
		for range 7 {
			cmd := exec.Command(bin.argv[0], bin.argv[1:]...)
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
			t.Fatalf("%s printed no inittrace lines", bin.name)
		}
		for pkg, ms := range least {
			if ms > 1 && !listed[bin.name+" "+pkg] {
				t.Errorf("%s links %s, whose init takes %.1f ms: make it lazy, keep it out, or list it with its cost in docs/init-allowlist.txt", bin.name, pkg, ms)
			}
		}
		for entry := range listed {
			b, pkg, _ := strings.Cut(entry, " ")
			if _, linked := least[pkg]; b == bin.name && !linked {
				t.Errorf("docs/init-allowlist.txt lists %s for %s, which no longer links it: remove the line", pkg, b)
			}
		}
	}
}

func readAllowlist(t *testing.T) map[string]bool {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "docs", "init-allowlist.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		out[fields[0]+" "+fields[1]] = true
	}
	return out
}
