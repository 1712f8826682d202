package taskcmd

import (
	"context"
	"strconv"
	"strings"

	"github.com/agents-sandbox/asb/host"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/runner"
)

// A warm run's decisions (trusted, the tasks are there, this clone's
// names, the secrets unchanged) come from its pass while every file they
// read keeps its stamp and the environment's secret values their
// fingerprint (outer/warmpass.go); the cheap ones (msb is there, the
// builder, asb's path) are made at every run.

// passRun is what a run is, to its pass: the words that make another run
// a different one. ok is false for a run that keeps no pass: one the warm
// path does not take, or a session's (its checkout and config are more to
// stamp; it decides each time).
func passRun(o *Options, spec runner.EngineSpec) (string, bool) {
	if !spec.Warmable() || o.Session != "" {
		return "", false
	}
	words := append([]string{spec.Cwd, strconv.FormatBool(o.Silent), strconv.FormatBool(o.Yes),
		strconv.FormatBool(len(o.Args) > 0)}, o.Tasks...)
	return strings.Join(words, "\x00"), true
}

// passed takes the decisions from the run's pass when it holds, and sets
// spec.Vars; ok is false when there is none to take.
func (o *Options) passed(ctx context.Context, spec *runner.EngineSpec) (sum string, ok bool, err error) {
	run, ok := passRun(o, *spec)
	if !ok {
		return "", false, nil
	}
	p := o.judge().LoadWarmPass(spec.Dir, run)
	if p == nil || runner.RotationEnvMAC(spec.Dir, p.Refs, o.Getenv) != p.EnvMAC {
		return "", false, nil
	}
	if err := host.NeedMSB(o.LookPath, o.Tasks); err != nil {
		return "", true, err
	}
	spec.Vars, err = o.runVars(ctx, spec.Dir, p.Vars)
	return p.Sum, true, err
}

// keepPass keeps the decisions of a run that found everything as it was
// (trusted, the secrets unchanged), made from start (UnixNano) on, for the
// next run of its kind.
func (o *Options) keepPass(spec runner.EngineSpec, id map[string]string, sum string, start int64) {
	run, ok := passRun(o, spec)
	if !ok {
		return
	}
	files, refs, ok, err := runner.WarmInputs(spec.Dir, spec.Vars["VM"], o.Getenv)
	if err != nil || !ok {
		return
	}
	p := &outer.WarmPass{Vars: id, Sum: sum, Refs: refs, Files: files,
		EnvMAC: runner.RotationEnvMAC(spec.Dir, refs, o.Getenv)}
	o.judge().SaveWarmPass(spec.Dir, run, p, start)
}
