package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/agents-sandbox/asb/internal/proc"
)

// The go-task engine. go-task, embedded as a library, links ~450 packages
// whose initialisation alone takes longer than any asb command without it
// (chroma's lexers for its error snippets, the cloud SDKs of its remote
// Taskfiles). So it lives in its own executable, asb-task, which `asb task`
// hands an EngineSpec to; every other command, and a warm `asb task agent`
// (see warm.go), starts without it. docs/startup.md has the measurements.

// EngineName is the engine's executable, installed beside asb.
const EngineName = "asb-task"

// EngineEnv names an engine executable to use instead of the one beside
// asb (tests, development builds).
const EngineEnv = "ASB_TASK_ENGINE"

// SessionEnv names, in the commands of a session's run (asb task
// --session), the session: `$(asb msb-conf)` in the Taskfile gets no
// Taskfile var, and leaves the folder's own VM's flags (asb serve's
// forward) off a session's VM.
const SessionEnv = "ASB_SESSION"

// EngineProtocol is the version of EngineSpec; asb and asb-task must agree.
const EngineProtocol = 1

// EngineSpec is one run of the outer folder's Taskfile, as asb resolved it.
type EngineSpec struct {
	Protocol int               `json:"protocol"`
	Dir      string            `json:"dir"` // the outer folder
	Tasks    []string          `json:"tasks"`
	Args     []string          `json:"args"` // after --: CLI_ARGS
	Vars     map[string]string `json:"vars"` // set over the Taskfile's own (identity, builder, asb)
	List     bool              `json:"list,omitempty"`
	Dry      bool              `json:"dry,omitempty"`
	Summary  string            `json:"summary,omitempty"`
	Force    bool              `json:"force,omitempty"`
	Verbose  bool              `json:"verbose,omitempty"`
	Silent   bool              `json:"silent,omitempty"`
	Yes      bool              `json:"yes,omitempty"`
	// Cwd is where asb was run (go-task's USER_WORKING_DIR).
	Cwd string `json:"cwd,omitempty"`
	// Warm: record the run for the warm path, when it can be (warm.go).
	Warm bool `json:"warm,omitempty"`
}

// WarmKey is the key of spec's run in the warm records.
func (s EngineSpec) WarmKey() WarmKey {
	return WarmKey{Dir: s.Dir, Cwd: s.Cwd, Tasks: s.Tasks, Vars: s.Vars, Silent: s.Silent, Args: len(s.Args) > 0}
}

// Warmable reports whether a run of spec may be recorded and replayed: a
// plain run of named tasks (arguments after -- included: the record holds
// marks in their place), with none of the flags that change what go-task
// does.
func (s EngineSpec) Warmable() bool {
	return len(s.Tasks) > 0 && !s.List && !s.Dry && s.Summary == "" && !s.Force && !s.Verbose
}

// EncodeSpec is the engine's command line for spec.
func EncodeSpec(spec EngineSpec) ([]string, error) {
	spec.Protocol = EngineProtocol
	b, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	return []string{EngineName, "--spec", string(b)}, nil
}

// DecodeSpec reads the engine's command line.
func DecodeSpec(args []string) (EngineSpec, error) {
	var spec EngineSpec
	if len(args) != 2 || args[0] != "--spec" {
		return spec, errors.New("asb-task is asb's go-task engine: run `asb task` instead (it takes --spec JSON from asb)")
	}
	if err := json.Unmarshal([]byte(args[1]), &spec); err != nil {
		return spec, fmt.Errorf("asb-task --spec: %w", err)
	}
	if spec.Protocol != EngineProtocol {
		return spec, fmt.Errorf("this asb-task speaks protocol %d, the asb that ran it %d: install both from one build (make install)", EngineProtocol, spec.Protocol)
	}
	return spec, nil
}

// FindEngine returns the engine's path: $ASB_TASK_ENGINE, else asb-task in
// the folder of asb's own (symlink-resolved) executable, else on PATH.
func FindEngine(getenv func(string) string, self func() (string, error)) (string, error) {
	return FindBeside(EngineName, EngineEnv, "asb task needs "+EngineName+", asb's go-task engine", getenv, self)
}

// FindBeside returns the path of name, one of asb's own executables:
// $env, else name in the folder of asb's own (symlink-resolved)
// executable, else on PATH. need says what is missing when none is found.
func FindBeside(name, env, need string, getenv func(string) string, self func() (string, error)) (string, error) {
	if p := getenv(env); p != "" {
		return p, nil
	}
	if self != nil {
		if exe, err := self(); err == nil {
			if r, err := filepath.EvalSymlinks(exe); err == nil {
				exe = r
			}
			p := filepath.Join(filepath.Dir(exe), name)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				return p, nil
			}
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%s beside asb or on PATH: `make install` installs it with asb, or go install github.com/agents-sandbox/asb/cmd/...@latest", need)
}

// ExecEngine replaces this process with the engine running spec: the
// terminal, signals and the exit code are the engine's own from here on.
// A run that only looks gets no value of the environment (LookingEnv).
func ExecEngine(path string, spec EngineSpec) error {
	argv, err := EncodeSpec(spec)
	if err != nil {
		return err
	}
	env := os.Environ()
	if spec.Looking() {
		env = LookingEnv(env)
	}
	err = proc.Exec(path, argv, env)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOENT) {
		return fmt.Errorf("run %s: not found", path)
	}
	return fmt.Errorf("run %s: %w", path, err)
}
