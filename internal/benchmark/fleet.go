package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agents-sandbox/asb/internal/testkit/fakes"
	"github.com/agents-sandbox/asb/runner"
)

// The fleet commands (asb ls, df, prune --dry-run) read every VM of the
// machine: their cost is the msb processes they start. They are counted,
// not timed, with the stand-ins holding 1 VM and then 200 over 50 outer
// folders: the count must not grow with the fleet.

var fleetCommands = [][]string{{"ls", "--all"}, {"df"}, {"prune", "--dry-run"}}

// fleetReport prints, for each fleet command, the tool calls of a listing
// at 1 and at 200 VMs (and of the first listing after the VMs were made,
// which reads each new VM's labels once), and reports whether each count
// is the same at both sizes.
func (w *workspace) fleetReport() (bool, error) {
	counts := map[int][][2]int{}
	for _, n := range []int{1, 200} {
		env, err := w.fleet(n, min(n, 50))
		if err != nil {
			return false, err
		}
		for _, args := range fleetCommands {
			var got [2]int
			for i := range got { // the first listing, then the next
				calls, err := w.countCalls(env, w.asb(w.root, args...))
				if err != nil {
					return false, err
				}
				got[i] = len(calls)
			}
			counts[n] = append(counts[n], got)
		}
	}
	fmt.Printf("\nfleet commands: tool calls with 1 VM and with 200 over 50 folders (the first listing after they were made in brackets)\n")
	ok := true
	for i, args := range fleetCommands {
		one, many := counts[1][i], counts[200][i]
		verdict := "ok"
		if one[1] != many[1] {
			verdict, ok = "OVER", false
		}
		fmt.Printf("%-30s %6d (%d) %6d (%d)  the same at 1 and 200 VMs: %s\n", "asb "+strings.Join(args, " "), one[1], one[0], many[1], many[0], verdict)
	}
	return ok, nil
}

// fleet makes n stand-in VMs over folders outer folders (each VM with its
// home volume, all from one image) in a state of their own, and returns
// the environment that sees them.
func (w *workspace) fleet(n, folders int) ([]string, error) {
	base := filepath.Join(w.root, fmt.Sprintf("fleet-%d", n))
	state, home := filepath.Join(base, "state"), filepath.Join(base, "msb")
	var vms []fakes.VMRecord
	var vols []string
	for i := range n {
		folder := filepath.Join(base, "folders", fmt.Sprintf("f%02d", i%folders))
		if err := os.MkdirAll(folder, 0o755); err != nil {
			return nil, err
		}
		name, vol := fmt.Sprintf("f%02d-vm%03d", i%folders, i), fmt.Sprintf("f%02d-home%03d", i%folders, i)
		status := "Stopped"
		if i%2 == 0 {
			status = "Running"
		}
		vms = append(vms, fakes.VMRecord{Name: name, Image: "localhost/asb-bench:1", Status: status, Created: fmt.Sprintf("2026-12-01T00:%02d:%02dZ", i/60, i%60),
			Labels: map[string]string{runner.LabelFolder: folder, runner.LabelSession: "", runner.LabelAgent: "opencode", runner.LabelHome: vol}})
		vols = append(vols, vol)
	}
	if err := fakes.Seed(state, vms, vols, "localhost/asb-bench:1"); err != nil {
		return nil, err
	}
	return append(slices.Clone(w.env), "ASB_FAKE_STATE="+state, "MSB_HOME="+home,
		"XDG_STATE_HOME="+filepath.Join(base, "xdg-state"), "ASB_MSB_CACHE="+filepath.Join(base, "msb-version.json")), nil
}

// countCalls runs c once in env and returns the tool calls the stand-ins
// recorded (their state is env's ASB_FAKE_STATE).
func (w *workspace) countCalls(env []string, c cmd) ([]fakes.Call, error) {
	state := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "ASB_FAKE_STATE="); ok {
			state = v
		}
	}
	if err := fakes.ResetCalls(state); err != nil {
		return nil, err
	}
	x := exec.Command(c.argv[0], c.argv[1:]...)
	x.Dir, x.Env = c.dir, env
	if out, err := x.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%v: %v\n%s", c.argv, err, out)
	}
	return fakes.Calls(state)
}
