package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// MSB is the msb CLI, as the Taskfile calls it (from PATH, in MSB_HOME).
type MSB struct {
	Bin    string              // "msb" unless set
	Getenv func(string) string // the environment msb runs in; nil: os.Getenv
	// Fresh: Sandboxes reads every VM's labels from msb, none from what an
	// earlier listing kept (fleetlabels.go): before anything is removed.
	Fresh bool
}

func (m MSB) bin() string {
	if m.Bin == "" {
		return "msb"
	}
	return m.Bin
}

func (m MSB) getenv(k string) string {
	if m.Getenv == nil {
		return os.Getenv(k)
	}
	return m.Getenv(k)
}

// Status returns the status msb records for vm ("Running", "Starting",
// "Stopped", …), or "" when msb has no such sandbox.
func (m MSB) Status(ctx context.Context, vm string) (string, error) {
	out, err := Output(ctx, "", m.bin(), "status", vm, "--format", "json")
	if err != nil {
		var te *ToolError
		if errors.As(err, &te) && te.Code > 0 && strings.Contains(te.Output, "not found") {
			return "", nil
		}
		return "", err
	}
	var st struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal(out, &st); err != nil {
		return "", fmt.Errorf("msb status %s --format json: %w", vm, err)
	}
	return st.Status, nil
}

// Volumes lists msb's volumes by name.
func (m MSB) Volumes(ctx context.Context) ([]string, error) {
	out, err := Output(ctx, "", m.bin(), "volume", "ls", "--format", "json")
	if err != nil {
		return nil, err
	}
	var vols []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(out), &vols); err != nil {
		return nil, fmt.Errorf("msb volume ls --format json: %w", err)
	}
	names := make([]string, 0, len(vols))
	for _, v := range vols {
		names = append(names, v.Name)
	}
	return names, nil
}

// Machines returns the pids of the `msb machine` processes that run vm for
// this MSB_HOME. msb starts one per booting or running VM, in a session of
// its own: a Ctrl-C in the terminal never reaches it.
func (m MSB) Machines(vm string) ([]int, error) {
	if runtime.GOOS != "linux" {
		return machinesPS(vm)
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	home := m.getenv("MSB_HOME")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !isMachine(strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00"), vm) {
			continue
		}
		env, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if procEnv(env, "MSB_HOME") == home {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// isMachine reports whether argv is `msb machine --name vm …`.
func isMachine(argv []string, vm string) bool {
	if len(argv) < 4 || filepath.Base(argv[0]) != "msb" || argv[1] != "machine" {
		return false
	}
	i := slices.Index(argv, "--name")
	return i > 0 && i+1 < len(argv) && argv[i+1] == vm
}

func procEnv(environ []byte, key string) string {
	for kv := range strings.SplitSeq(string(environ), "\x00") {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}

// machinesPS finds machine processes with ps (macOS has no /proc; there the
// MSB_HOME of a process is not visible, so every home's VM of that name is
// taken: VM names carry a hash of the clone, so they do not collide).
func machinesPS(vm string) ([]int, error) {
	out, err := Output(context.Background(), "", "ps", "-axww", "-o", "pid=,command=")
	if err != nil {
		return nil, err
	}
	var pids []int
	for line := range strings.SplitSeq(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		if pid, err := strconv.Atoi(f[0]); err == nil && isMachine(f[1:], vm) {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// ReapBoot ends a boot of vm that was left half done: when msb still says
// the VM is Starting, it ends its machine processes (SIGTERM, SIGKILL after
// grace) — msb's own stop and remove wait for a spinning boot to end, which
// takes minutes on a host without CPU virtualization — and with remove it
// removes the VM record as well. A VM that is running, stopped or absent is
// left alone, unless unfinished: then vm is what this run's msb create
// made, and a record that is not Running is what a create that failed or
// was interrupted left (msb records it Stopped), which remove removes too
// (else the Taskfile's status, msb inspect, would take it for made),
// after it read the end of msb's log of it (LastWords: why it stopped,
// which the removal takes with it). It says what it did on w.
func (m MSB) ReapBoot(ctx context.Context, vm string, remove, unfinished bool, grace time.Duration, w io.Writer) error {
	status, err := m.Status(ctx, vm)
	if errors.Is(err, exec.ErrNotFound) {
		return nil // no msb, no boot: the run says msb is missing where it needs it
	}
	if err == nil && remove && unfinished && status != "" && status != "Starting" && status != "Running" {
		words := m.LastWords(ctx, vm) // gone with the VM
		if err := m.removeHalfMade(ctx, vm); err != nil {
			return err
		}
		fmt.Fprintf(w, "asb: the create of %s did not finish (msb says %s): removed the half-made VM; the next run creates it again\n", vm, status)
		if len(words) > 0 {
			fmt.Fprintf(w, "asb: the end of msb's log of %s (debug lines left out):\n  %s\n", vm, strings.Join(words, "\n  "))
		}
		return nil
	}
	if err != nil || status != "Starting" {
		return err
	}
	pids, err := m.Machines(vm)
	if err != nil {
		return fmt.Errorf("find the msb machine of %s: %w", vm, err)
	}
	for _, pid := range pids {
		endProcess(pid, grace)
	}
	what := fmt.Sprintf("ended its msb machine process (pid %s)", joinInts(pids))
	if len(pids) == 0 {
		what = "no msb machine process of it was left"
	}
	if remove {
		if err := m.removeHalfMade(ctx, vm); err != nil {
			return err
		}
		what += " and removed the half-made VM; the next run creates it again"
	}
	fmt.Fprintf(w, "asb: the boot of %s did not finish: %s\n", vm, what)
	return nil
}

// removeHalfMade removes the VM record a boot or create that did not
// finish left (msb's own remove; its machine, if any, is ended first).
func (m MSB) removeHalfMade(ctx context.Context, vm string) error {
	_, err := Output(ctx, "", m.bin(), "remove", "--force", "--quiet", vm)
	return err
}

// endProcess sends SIGTERM, and SIGKILL when pid is still there after grace.
func endProcess(pid int, grace time.Duration) {
	if syscall.Kill(pid, syscall.SIGTERM) != nil {
		return
	}
	for deadline := time.Now().Add(grace); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if !alive(pid) {
			return
		}
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// alive reports whether pid runs (a zombie, ended but not yet reaped by its
// parent, does not).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return runtime.GOOS != "linux"
	}
	// pid (comm) STATE …; comm may hold spaces and parentheses.
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] != 'Z'
	}
	return true
}

// StopBudget is how long asb's own stops (a session's removal, a restart
// for new secrets) let msb's graceful stop take: msb waits for ever
// without one, and a VM whose kernel no longer answers was left
// "Draining" so (ci60; a session rm of 2026-12-07 waited on it until the
// test killed it). A stop over budget fails and kills nothing (msb 0.7.2
// on: schema.MSBReleases); the message names msb's own words and the way
// on (msb stop --force).
const StopBudget = 60 * time.Second

// Stop stops vm (its disk and home volume stay), or fails when msb's
// graceful stop does not finish within StopBudget (the VM left as msb
// left it: the shutdown may still complete).
func (m MSB) Stop(ctx context.Context, vm string) error {
	_, err := Output(ctx, "", m.bin(), "stop", "--quiet", "--timeout", strconv.Itoa(int(StopBudget/time.Second)), vm)
	return err
}

// ForceStop is the way on that a failed Stop's message names: msb's kill
// of vm, and what it costs.
func ForceStop(vm string) string {
	return "msb stop --force " + vm + ", which loses what the VM has not written to disk"
}
