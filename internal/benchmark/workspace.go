package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/agents-sandbox/asb/internal/testkit/testenv"
)

// cmd is one command to time; prep runs before run i (untimed).
type cmd struct {
	argv []string
	dir  string
	env  []string
	prep func(i int) error
}

// run times one exec of c, from start to exit, and its peak memory.
func (c cmd) run(i int) (time.Duration, int64, error) {
	if c.prep != nil {
		if err := c.prep(i); err != nil {
			return 0, 0, err
		}
	}
	x := exec.Command(c.argv[0], c.argv[1:]...)
	x.Dir, x.Env = c.dir, c.env
	var errb bytes.Buffer
	x.Stderr = &errb
	start := time.Now()
	err := x.Run()
	d := time.Since(start)
	if err != nil {
		return 0, 0, fmt.Errorf("%v: %v\n%s", c.argv, err, errb.Bytes())
	}
	var rss int64
	if ru, ok := x.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss // KiB on Linux
	}
	return d, rss, nil
}

// workspace holds the binaries and folders the benchmark runs in.
type workspace struct {
	root, bin string
	env       []string
}

func newWorkspace() (*workspace, error) {
	root, err := os.MkdirTemp("", "asb-bench-")
	if err != nil {
		return nil, err
	}
	w := &workspace{root: root, bin: filepath.Join(root, "bin")}
	build := exec.Command("go", "build", "-o", w.bin+string(filepath.Separator),
		"github.com/agents-sandbox/asb/cmd/asb", "github.com/agents-sandbox/asb/cmd/asb-task",
		"github.com/agents-sandbox/asb/internal/benchmark/floor",
		"github.com/agents-sandbox/asb/internal/testkit/fakes/cmd/fake")
	build.Env = append(os.Environ(), testenv.InstallEnv) // asb as users install it: static
	if out, err := build.CombinedOutput(); err != nil {
		w.close()
		return nil, fmt.Errorf("build: %v\n%s", err, out)
	}
	for _, t := range []string{"msb", "docker", "podman"} {
		if err := os.Symlink(filepath.Join(w.bin, "fake"), filepath.Join(w.bin, t)); err != nil {
			w.close()
			return nil, err
		}
	}
	w.env = append(os.Environ(), "PATH="+w.bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"ASB_FAKE_STATE="+filepath.Join(root, "state"), "MSB_HOME="+filepath.Join(root, "msb"),
		"XDG_STATE_HOME="+filepath.Join(root, "xdg-state"), "ASB_MSB_CACHE="+filepath.Join(root, "msb-version.json"),
		"ASB_SKIP_HOST_CHECK=1", "ASB_BUILDER=docker", "OPENCODE_API_KEY=bench-key",
		"GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@example.com", "GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@example.com")
	return w, nil
}

func (w *workspace) close() { _ = os.RemoveAll(w.root) }

func (w *workspace) asb(dir string, args ...string) cmd {
	return cmd{argv: append([]string{filepath.Join(w.bin, "asb")}, args...), dir: dir, env: w.env}
}

// must runs a setup command.
func (w *workspace) must(dir string, argv ...string) error {
	x := exec.Command(argv[0], argv[1:]...)
	x.Dir, x.Env = dir, w.env
	if out, err := x.CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %v\n%s", argv, err, out)
	}
	return nil
}

func (w *workspace) pairs(taskBin string) ([]pair, error) {
	outer := filepath.Join(w.root, "outer")
	if err := w.must(w.root, filepath.Join(w.bin, "asb"), "init", "--agent", "opencode", outer); err != nil {
		return nil, err
	}
	// An outer folder as a user's is after the first asb task agent.
	for range 2 {
		if err := w.must(outer, filepath.Join(w.bin, "asb"), "task", "agent"); err != nil {
			return nil, err
		}
	}
	vm, err := w.vmName(outer)
	if err != nil {
		return nil, err
	}
	floor := cmd{argv: []string{filepath.Join(w.bin, "floor"), "version"}, dir: w.root, env: w.env}
	within := func(x float64) func(a, f, _ sample) bool {
		return func(a, f, _ sample) bool { return float64(a.med) <= x*float64(f.med) }
	}
	under := func(a sample) bool { return a.rssKiB < 25*1024 }
	ps := []pair{
		{name: "asb version", asb: w.asb(w.root, "version"), floor: floor, budget: "<= 3x cobra, < 25 MiB",
			ok: func(a, f, x sample) bool { return within(3)(a, f, x) && under(a) }},
		{name: "asb --help", asb: w.asb(w.root, "--help"), floor: floor, budget: "<= 3x cobra", ok: within(3)},
		{name: "asb validate --help", asb: w.asb(outer, "validate", "--help"), floor: floor, budget: "<= 3x cobra", ok: within(3)},
		{name: "asb boundary", asb: w.asb(outer, "boundary"), floor: floor, budget: "<= 3x cobra", ok: within(3)},
		{name: "completion (asb __complete)", asb: w.asb(outer, "__complete", "task", ""), floor: floor, budget: "<= 3x cobra", ok: within(3)},
		{name: "asb validate (whole)", asb: w.asb(outer, "validate"), floor: floor, budget: "(reported)", ok: within(100)},
	}
	ps = append(ps, w.initPair())
	if taskBin != "" {
		ps = append(ps, pair{name: "asb task --list", asb: w.asb(outer, "task", "--list"),
			floor: cmd{argv: []string{taskBin, "--list"}, dir: outer, env: w.env}, budget: "<= 1.0x task --list", ok: within(1.0)})
	} else {
		ps = append(ps, pair{name: "asb task --list", budget: "skipped: no -task binary (make bench installs it)"})
	}
	warm, err := w.warmPair(outer, vm)
	if err != nil {
		return nil, err
	}
	return append(ps, warm), nil
}

// warmPair is a warm asb task agent beside the bare msb exec it runs, and
// asb version timed with them: the budget is the exec plus 1.3 times asb's
// own start. A warm run makes one tool call, the exec: the pair is only
// timed when one run of it, counted by the stand-ins, does.
func (w *workspace) warmPair(outer, vm string) (pair, error) {
	exec := cmd{argv: []string{filepath.Join(w.bin, "msb"), "exec", "-t", "-u", "dev", "-w", "/workspace", vm, "--", "opencode"}, dir: outer, env: w.env}
	version := w.asb(w.root, "version")
	agent := w.asb(outer, "task", "agent")
	calls, err := w.countCalls(w.env, agent)
	if err != nil {
		return pair{}, err
	}
	if len(calls) != 1 || calls[0][0] != "msb" || calls[0][1] != "exec" {
		return pair{name: "warm asb task agent", budget: fmt.Sprintf("OVER: a warm run made %d tool calls, want the msb exec alone: %q", len(calls), calls)}, nil
	}
	return pair{name: "warm asb task agent", asb: agent, floor: exec, third: &version,
		budget: "<= msb exec + 1.3x asb version, 1 tool call",
		ok:     func(a, f, x sample) bool { return float64(a.med) <= float64(f.med)+1.3*float64(x.med) },
		note: func(a, f, x sample) string {
			return fmt.Sprintf("+%.2fx ver (%s)", float64(a.med-f.med)/float64(x.med), ms(x.med))
		}}, nil
}

// initPair is asb init against what it lays down, copied: cp -a of a
// folder asb made, and git init.
func (w *workspace) initPair() pair {
	model := filepath.Join(w.root, "model")
	_ = w.must(w.root, filepath.Join(w.bin, "asb"), "init", "--agent", "opencode", "--no-git", model)
	_ = os.RemoveAll(filepath.Join(model, ".asb"))
	fresh := func(prefix string) func(i int) error {
		return func(i int) error { return os.RemoveAll(filepath.Join(w.root, fmt.Sprintf("%s%d", prefix, i))) }
	}
	a := w.asb(w.root, "init", "--agent", "opencode", "PLACEHOLDER")
	b := cmd{argv: []string{"sh", "-c", `cp -a model "$1" && git init -q "$1"`, "sh", "PLACEHOLDER"}, dir: w.root, env: w.env}
	a.prep, b.prep = fresh("i"), fresh("c")
	return pair{name: "asb init", asb: numbered(a, "i"), floor: numbered(b, "c"), budget: "<= 1.5x cp -a + git init",
		ok: func(x, f, _ sample) bool { return float64(x.med) <= 1.5*float64(f.med) }}
}

// numbered makes c write to a new folder PREFIX<i> at each run.
func numbered(c cmd, prefix string) cmd {
	prep := c.prep
	base := c.argv
	c.argv = nil
	return cmd{dir: c.dir, env: c.env, argv: base, prep: func(i int) error {
		base[len(base)-1] = fmt.Sprintf("%s%d", prefix, i)
		return prep(i)
	}}
}

func (w *workspace) vmName(outer string) (string, error) {
	entries, err := os.ReadDir(filepath.Join(w.root, "state", "msb-vms"))
	if err != nil || len(entries) != 1 {
		return "", fmt.Errorf("the stand-in has no single VM: %v", err)
	}
	name := make([]byte, len(entries[0].Name())/2)
	if _, err := fmt.Sscanf(entries[0].Name(), "%x", &name); err != nil {
		return "", err
	}
	return string(name), nil
}
