package engine

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/go-task/task/v3/taskfile/ast"
	"mvdan.cc/sh/v3/syntax"

	"github.com/agents-sandbox/asb/runner"
	"github.com/agents-sandbox/asb/schema"
)

// argsRecord records a run with arguments after -- (runner/warmargs.go):
// the tasks compiled with CLI_ARGS set to a made-up value, that value
// replaced by the marks. It is kept only when the marks, filled in, give
// what go-task compiles for the run's own arguments and for a second
// made-up value full of quotes, dollars and spaces: a template that
// tests, slices or transforms CLI_ARGS otherwise than {{q …}} fails that,
// and the run stays the engine's.
func (t *Tasks) argsRecord(spec runner.EngineSpec, key runner.WarmKey) (*runner.WarmRecord, string) {
	raw, err := schema.ReadFile(filepath.Join(spec.Dir, runner.TaskfileName))
	if err != nil {
		return nil, err.Error()
	}
	if strings.Contains(string(raw), "CLI_ARGS_LIST") {
		return nil, "the Taskfile uses CLI_ARGS_LIST"
	}
	actual, err := runner.CLIArgs(spec.Args)
	if err != nil {
		return nil, err.Error()
	}
	defer t.setCLIArgs(actual)
	tag := make([]byte, 6)
	_, _ = rand.Read(tag)
	plain := "asb-args-" + hex.EncodeToString(tag) + " x"
	nasty := "asb-args-" + hex.EncodeToString(tag) + ` '"$HOME \ x`
	var recs [3]*runner.WarmRecord
	for i, v := range []string{actual, plain, nasty} {
		t.setCLIArgs(v)
		r, why := t.compileRecord(spec, key)
		if r == nil {
			return nil, why
		}
		recs[i] = r
	}
	q, err := syntax.Quote(plain, syntax.LangBash)
	if err != nil {
		return nil, err.Error()
	}
	marked := recs[1].Rewrite(strings.NewReplacer(q, runner.ArgsMarkQ, plain, runner.ArgsMark).Replace)
	for i, v := range map[int]string{0: actual, 2: nasty} {
		rp, err := runner.ArgsReplacer(v)
		if err != nil {
			return nil, err.Error()
		}
		if !sameRecord(marked.Rewrite(rp.Replace), recs[i]) {
			return nil, "a template uses CLI_ARGS otherwise than as it is or quoted ({{q .CLI_ARGS}})"
		}
	}
	return marked, ""
}

// setCLIArgs sets CLI_ARGS for the next compile.
func (t *Tasks) setCLIArgs(v string) {
	t.e.Taskfile.Vars.Set("CLI_ARGS", ast.Var{Value: v})
}

func sameRecord(a, b *runner.WarmRecord) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}
