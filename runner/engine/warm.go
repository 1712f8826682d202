package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/go-task/task/v3"
	"github.com/go-task/task/v3/taskfile/ast"
	"github.com/joho/godotenv"
	"go.yaml.in/yaml/v3"

	"github.com/agents-sandbox/asb/runner"
	"github.com/agents-sandbox/asb/schema"
)

// The engine's half of the warm path (runner/warm.go): after a run that
// succeeded, record what go-task evaluated, when the record can be trusted
// to come out the same for the same key. It cannot when a template depends
// on anything but the Taskfile and the key (an environment variable, the
// time, a random value, an sh: var), when a named task's commands call
// other tasks or are conditional, when a dependency has neither status nor
// sources (it always runs), or when there are prompts or includes, or
// arguments after -- that the commands use otherwise than as CLI_ARGS is
// (warmargs.go). Then there is no record, and every run is the engine's,
// as before.

// specialVars are the vars go-task itself sets; a template may use them.
var specialVars = []string{"CLI_ARGS", "CLI_ARGS_LIST", "CLI_FORCE", "CLI_SILENT", "CLI_VERBOSE", "CLI_ASSUME_YES",
	"CLI_OFFLINE", "TASK", "ALIAS", "TASK_EXE", "ROOT_TASKFILE", "ROOT_DIR", "TASKFILE", "TASKFILE_DIR", "TASK_DIR",
	"USER_WORKING_DIR", "TASK_VERSION", "ITEM", "EXIT_CODE", "MATCH", "KEY"}

var (
	actionRe   = regexp.MustCompile(`(?s)\{\{(.*?)\}\}`)
	varRefRe   = regexp.MustCompile(`(?:^|[^A-Za-z0-9_\)\]])\.([A-Za-z_][A-Za-z0-9_]*)`)
	volatileRe = regexp.MustCompile(`\b(now|date|dateInZone|unixEpoch|randAlpha|randAlphaNum|randNumeric|randAscii|randBytes|randInt|uuidv4|env|expandenv|getHostByName|shuffle|TIMESTAMP|OS|ARCH)\b`)
)

// recordWarm records the run of spec, or drops the old record when this
// run cannot be recorded.
func (t *Tasks) recordWarm(spec runner.EngineSpec) {
	if !spec.Warm {
		return
	}
	key := spec.WarmKey()
	r, why := t.warmRecord(spec, key)
	if r == nil {
		runner.DropWarm(key)
		if t.opts.Verbose {
			fmt.Fprintf(t.opts.Stderr, "asb: no warm record: %s\n", why)
		}
		return
	}
	if err := runner.SaveWarm(r); err != nil {
		runner.DropWarm(key)
	}
}

func (t *Tasks) warmRecord(spec runner.EngineSpec, key runner.WarmKey) (*runner.WarmRecord, string) {
	if len(spec.Args) > 0 {
		return t.argsRecord(spec, key)
	}
	return t.compileRecord(spec, key)
}

// compileRecord records the run of spec as go-task compiles it now.
func (t *Tasks) compileRecord(spec runner.EngineSpec, key runner.WarmKey) (*runner.WarmRecord, string) {
	raw, err := schema.ReadFile(filepath.Join(spec.Dir, runner.TaskfileName))
	if err != nil {
		return nil, err.Error()
	}
	if why := t.templatesDependOnKeyOnly(string(raw)); why != "" {
		return nil, why
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err.Error()
	}
	bins, err := runner.StampFiles([]string{spec.Vars["ASB"], self})
	if err != nil {
		return nil, err.Error()
	}
	sum := sha256.Sum256(raw)
	r := &runner.WarmRecord{Key: key, Taskfile: hex.EncodeToString(sum[:]), Binaries: bins}
	seen := map[string]bool{}
	for i, name := range spec.Tasks {
		ct, err := t.e.CompiledTask(&task.Call{Task: name})
		if err != nil {
			return nil, err.Error()
		}
		if why := plainTask(ct); why != "" {
			return nil, name + ": " + why
		}
		if why := plainCmds(ct); why != "" {
			return nil, name + ": " + why
		}
		if len(ct.Status) > 0 || len(ct.Sources) > 0 {
			return nil, name + " has its own status or sources"
		}
		for _, d := range ct.Deps {
			if why := t.recordDep(r, &task.Call{Task: d.Task, Vars: d.Vars, Silent: d.Silent}, spec, seen); why != "" {
				return nil, why
			}
		}
		// go-task checks a named task's preconditions after its
		// dependencies (vm:exec's: that there is a command to run).
		env, dotenv, why := t.stepEnv(ct)
		if why != "" {
			return nil, name + ": " + why
		}
		for _, p := range ct.Preconditions {
			r.Checks = append(r.Checks, runner.WarmStep{Task: ct.Name(), Kind: "precondition", Cmd: p.Sh, Dir: ct.Dir, Env: env, Dotenv: dotenv}.Judged())
		}
		if why := t.recordCmds(r, ct, spec); why != "" {
			return nil, why
		}
		r.Session = i == len(spec.Tasks)-1 && ct.Interactive
	}
	return r, ""
}

// recordDep records a dependency's checks, its own dependencies' first, as
// go-task runs them.
func (t *Tasks) recordDep(r *runner.WarmRecord, call *task.Call, spec runner.EngineSpec, seen map[string]bool) string {
	if seen[call.Task] {
		return ""
	}
	seen[call.Task] = true
	ct, err := t.e.CompiledTask(call)
	if err != nil {
		return err.Error()
	}
	if why := plainTask(ct); why != "" {
		return call.Task + ": " + why
	}
	if len(ct.Status) == 0 && len(ct.Sources) == 0 || ct.Method == "none" {
		return call.Task + " has neither status nor sources: it always runs"
	}
	for _, d := range ct.Deps {
		if why := t.recordDep(r, &task.Call{Task: d.Task, Vars: d.Vars, Silent: d.Silent}, spec, seen); why != "" {
			return why
		}
	}
	env, dotenv, why := t.stepEnv(ct)
	if why != "" {
		return call.Task + ": " + why
	}
	step := func(kind, cmd string) runner.WarmStep {
		return runner.WarmStep{Task: ct.Name(), Kind: kind, Cmd: cmd, Dir: ct.Dir, Env: env, Dotenv: dotenv}.Judged()
	}
	for _, p := range ct.Preconditions {
		r.Checks = append(r.Checks, step("precondition", p.Sh))
	}
	for _, s := range ct.Status {
		st := step("status", s)
		st.VM = runner.VMCheck(s)
		r.Checks = append(r.Checks, st)
	}
	for _, g := range slices.Concat(ct.Sources, ct.Generates) {
		root := runner.GlobRoot(ct.Dir, g.Glob)
		s, err := runner.TreeSum(root)
		if err != nil {
			return err.Error()
		}
		r.Sources = append(r.Sources, runner.TreeStamp{Root: root, Sum: s})
	}
	if !call.Silent && !ct.IsSilent() && !t.e.Taskfile.Silent && !spec.Silent {
		up := step("uptodate", "")
		up.Log = fmt.Sprintf("task: Task %q is up to date", ct.Name())
		r.Checks = append(r.Checks, up)
	}
	return ""
}

func (t *Tasks) recordCmds(r *runner.WarmRecord, ct *ast.Task, spec runner.EngineSpec) string {
	env, dotenv, why := t.stepEnv(ct)
	if why != "" {
		return ct.Name() + ": " + why
	}
	for _, c := range ct.Cmds {
		s := runner.WarmStep{Task: ct.Name(), Kind: "cmd", Cmd: c.Cmd, Dir: ct.Dir, Env: env, Dotenv: dotenv,
			Set: slices.Concat(t.e.Taskfile.Set, ct.Set, c.Set), Shopt: slices.Concat(t.e.Taskfile.Shopt, ct.Shopt, c.Shopt),
			IgnoreError: c.IgnoreError || ct.IgnoreError}
		if !c.Silent && !ct.IsSilent() && !t.e.Taskfile.Silent && !spec.Silent {
			s.Log = fmt.Sprintf("task: [%s] %s", ct.Name(), c.LogCmd)
		}
		r.Cmds = append(r.Cmds, s.Judged())
	}
	return ""
}

// plainTask says why a compiled task could be judged otherwise than as
// recorded (its commands are plainCmds' to judge, for a named task).
func plainTask(ct *ast.Task) string {
	switch {
	case len(ct.Prompt) > 0:
		return "it asks a question"
	case ct.If != "" || len(ct.Platforms) > 0 || ct.Requires != nil && len(ct.Requires.Vars) > 0:
		return "it is conditional"
	case ct.Watch:
		return "it watches"
	}
	return ""
}

// plainCmds says why a named task's commands could run otherwise than as
// recorded.
func plainCmds(ct *ast.Task) string {
	for _, c := range ct.Cmds {
		if c.Task != "" || c.For != nil || c.If != "" || len(c.Platforms) > 0 || c.Defer || c.Timeout > 0 {
			return "a command calls a task, loops, is conditional, deferred or timed"
		}
	}
	return ""
}

// stepEnv returns the task's literal env entries (global and its own) and
// its dotenv files, absolute; values read from dotenv files are never
// recorded: the warm run reads them again.
func (t *Tasks) stepEnv(ct *ast.Task) (env, dotenv []string, why string) {
	for _, f := range t.e.Taskfile.Dotenv {
		dotenv = append(dotenv, absIn(t.opts.Dir, f))
	}
	for _, f := range ct.Dotenv {
		dotenv = append(dotenv, absIn(ct.Dir, f))
	}
	fromDotenv := map[string]bool{}
	for _, f := range dotenv {
		vals, _ := godotenv.Read(f)
		for k := range vals {
			fromDotenv[k] = true
		}
	}
	orig, _ := t.e.Taskfile.Tasks.Get(ct.Task)
	for _, vars := range []*ast.Vars{t.e.Taskfile.Env, taskEnv(orig)} {
		if vars == nil {
			continue
		}
		for k, v := range vars.All() {
			s, ok := v.Value.(string)
			switch {
			case v.Sh != nil || !ok || strings.Contains(s, "{{"):
				return nil, nil, "env " + k + " is computed"
			case fromDotenv[k]:
				return nil, nil, "env " + k + " is also in a dotenv file"
			}
			env = append(env, k+"="+s)
		}
	}
	return env, dotenv, ""
}

func taskEnv(t *ast.Task) *ast.Vars {
	if t == nil {
		return nil
	}
	return t.Env
}

func absIn(dir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// templatesDependOnKeyOnly says why the Taskfile's templates could come
// out differently for the same key ("" when they cannot): an sh: var, a
// volatile function, a reference to anything but a Taskfile var or one of
// go-task's own, or an included Taskfile.
func (t *Tasks) templatesDependOnKeyOnly(text string) string {
	var parsed ast.Taskfile
	if err := yaml.Unmarshal([]byte(text), &parsed); err != nil {
		return err.Error()
	}
	if parsed.Includes != nil && parsed.Includes.Len() > 0 {
		return "it includes other Taskfiles"
	}
	known := map[string]bool{}
	for _, n := range specialVars {
		known[n] = true
	}
	for k, v := range t.e.Taskfile.Vars.All() {
		if v.Sh != nil {
			return "var " + k + " is computed by a command (sh:)"
		}
		// A secret var (secrets.go) holds a value that must never be
		// recorded: a template using one keeps the run the engine's.
		known[k] = !v.Secret
	}
	for _, name := range t.Names() {
		at, _ := t.e.Taskfile.Tasks.Get(name)
		if at == nil || at.Vars == nil {
			continue
		}
		for k, v := range at.Vars.All() {
			if v.Sh != nil {
				return "var " + k + " of " + name + " is computed by a command (sh:)"
			}
			known[k] = true
		}
	}
	for _, m := range actionRe.FindAllStringSubmatch(text, -1) {
		if f := volatileRe.FindString(m[1]); f != "" {
			return "a template uses " + f
		}
		for _, ref := range varRefRe.FindAllStringSubmatch(m[1], -1) {
			if !known[ref[1]] {
				return "a template uses ." + ref[1] + ", which is not a Taskfile var (an environment variable?)"
			}
		}
	}
	return ""
}
