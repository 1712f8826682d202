package runner

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// A run with arguments after -- (asb task vm:exec -- ls -la; asb task
// agent -- --continue) compiles to commands that hold them: CLI_ARGS, each
// argument shell-quoted and joined with spaces (the engine's setCLIVars),
// written in a template as it is ({{.CLI_ARGS}}) or quoted once more
// ({{q .CLI_ARGS}}). Its record holds, in their place, ArgsMark or
// ArgsMarkQ, and never the arguments; the warm run puts the arguments of
// this run back (WithArgs). The engine records such a run only when that
// reproduces what go-task compiled, for the run itself and for two other
// values, one full of quotes and dollars (runner/engine/warm.go); a
// template that does anything else with CLI_ARGS keeps the run the
// engine's.
const (
	ArgsMark  = "\x00asb:CLI_ARGS\x00"
	ArgsMarkQ = "\x00asb:q CLI_ARGS\x00"
)

// CLIArgs is CLI_ARGS of args, as the engine sets it.
func CLIArgs(args []string) (string, error) {
	quoted := make([]string, 0, len(args))
	for _, a := range args {
		q, err := syntax.Quote(a, syntax.LangBash)
		if err != nil {
			return "", err
		}
		quoted = append(quoted, q)
	}
	return strings.Join(quoted, " "), nil
}

// ArgsReplacer writes cliArgs (CLIArgs) where the marks are.
func ArgsReplacer(cliArgs string) (*strings.Replacer, error) {
	q, err := syntax.Quote(cliArgs, syntax.LangBash)
	if err != nil {
		return nil, err
	}
	return strings.NewReplacer(ArgsMark, cliArgs, ArgsMarkQ, q), nil
}

// WithArgs is r with args written where its marks are; r itself is left
// as it is. It fails for arguments a shell cannot be given (a NUL byte).
func (r *WarmRecord) WithArgs(args []string) (*WarmRecord, error) {
	v, err := CLIArgs(args)
	if err != nil {
		return nil, err
	}
	rp, err := ArgsReplacer(v)
	if err != nil {
		return nil, err
	}
	return r.Rewrite(rp.Replace), nil
}

// Rewrite is a copy of r with f applied to every string of its steps and
// source roots (what the arguments can reach).
func (r *WarmRecord) Rewrite(f func(string) string) *WarmRecord {
	out := *r
	steps := func(in []WarmStep) []WarmStep {
		res := make([]WarmStep, len(in))
		for i, s := range in {
			cmd := f(s.Cmd)
			if cmd != s.Cmd {
				s.Cmd = cmd
				s = s.Judged() // on the check as the arguments made it
			}
			s.Log, s.Dir, s.VM = f(s.Log), f(s.Dir), f(s.VM)
			s.Env, s.Dotenv, s.Set, s.Shopt = mapAll(s.Env, f), mapAll(s.Dotenv, f), mapAll(s.Set, f), mapAll(s.Shopt, f)
			res[i] = s
		}
		return res
	}
	out.Checks, out.Cmds = steps(r.Checks), steps(r.Cmds)
	out.Sources = make([]TreeStamp, len(r.Sources))
	for i, s := range r.Sources {
		out.Sources[i] = TreeStamp{Root: f(s.Root), Sum: s.Sum}
	}
	return &out
}

func mapAll(in []string, f func(string) string) []string {
	if in == nil {
		return nil
	}
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = f(s)
	}
	return out
}
