package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"

	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/runner"
	"github.com/go-task/task/v3/taskfile/ast"
	"go.yaml.in/yaml/v3"
)

// Looking (--dry, --list, --summary) reads the Taskfile and runs nothing of
// it: a cloned folder's Taskfile is someone else's code until its user has
// approved it, and even then looking at it must not run it. go-task itself
// would run `sh:` variables to print a dry run's commands, read `dotenv:`
// files, and check preconditions; the engine disarms all of that first.

// lookingIO prepares a run that only looks: nothing runs, so what go-task
// prints can all go through a redactor of the secrets' values (a command's
// terminal never does). A Taskfile that cannot be looked at without running
// some of it is refused (lookRefusal).
func lookingIO(spec runner.EngineSpec, stdio Stdio) (_ Stdio, secrets []string, flush func(), err error) {
	noNameServer()
	if why := lookupRefusal(spec.Dir); why != "" {
		return stdio, nil, nil, errors.New(why)
	}
	if tf, rerr := readAST(spec.Dir); rerr == nil {
		if why := lookRefusal(tf); why != "" {
			return stdio, nil, nil, errors.New(why)
		}
		_, secrets = secretsOf(spec.Dir, tf)
	}
	out, errOut := newRedactor(stdio.Out, secrets), newRedactor(stdio.Err, secrets)
	stdio.Out, stdio.Err = out, errOut
	return stdio, secrets, func() { out.Flush(); errOut.Flush() }, nil
}

// lookRefusal says why a Taskfile cannot be looked at without running some
// of it, or "" when it can. go-task reads a top-level dotenv: while it
// sets up, and to name those files it evaluates every top-level variable,
// sh: ones included, before the engine can disarm them.
func lookRefusal(tf *ast.Taskfile) string {
	if tf == nil || len(tf.Dotenv) == 0 {
		return ""
	}
	return fmt.Sprintf("not shown: Taskfile.yml has a top-level dotenv: (%s), and go-task reads it, running the Taskfile's sh: variables, before it can show anything; asb's Taskfile has none (asb update restores it), and asb task --dry runs nothing of a folder",
		strings.Join(tf.Dotenv, ", "))
}

// errNoNameServer is what a looking run's resolver answers.
var errNoNameServer = errors.New("a looking run of asb task asks no name server")

// noNameServer makes this process's resolver dial nothing: whatever a
// template of a looking run calls (go-task's getHostByName today, which
// lookupRefusal refuses by name; a function a later go-task adds), no
// query leaves the host. A name /etc/hosts holds still resolves, from the
// file. The process is this one run's.
func noNameServer() {
	net.DefaultResolver = &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		return nil, errNoNameServer
	}}
}

// lookupFunc is the template function of go-task's (sprig's) that looks
// a name up on the network: a template that calls it would make the host
// send a query of the folder's choosing (the user's name, the folder's
// path, spelled into a name under the attacker's domain) on a mere look.
const lookupFunc = "getHostByName"

// lookupRefusal says why the folder's Taskfiles cannot be looked at
// without a network request, or "" when they can. go-task templates the
// include paths while it reads the Taskfiles, and desc:, summary: and a
// dry run's commands after, so every string of every Taskfile it reads
// is checked first, as YAML decodes it (a "\x42" escape spells a B, a
// !!binary scalar is base64).
func lookupRefusal(dir string) string {
	files, err := outer.Taskfiles(dir)
	if err != nil {
		return "not shown: " + err.Error()
	}
	for _, n := range slices.Sorted(maps.Keys(files)) {
		if callsLookup(files[n]) {
			return fmt.Sprintf("not shown: %s calls %s in a template, which looks a name up on the network from this host; asb task --list, --dry and --summary make no network request of a folder's choosing (asb's Taskfile calls none)", n, lookupFunc)
		}
	}
	return ""
}

// callsLookup reports whether a string of the YAML document raw (a key or
// a value) names lookupFunc; a document YAML cannot read is judged by its
// bytes (go-task cannot read it either).
func callsLookup(raw []byte) bool {
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return bytes.Contains(raw, []byte(lookupFunc))
	}
	var walk func(n *yaml.Node) bool
	walk = func(n *yaml.Node) bool {
		var text string // a !!binary scalar decodes from base64
		if strings.Contains(n.Value, lookupFunc) || (n.Kind == yaml.ScalarNode && n.Decode(&text) == nil && strings.Contains(text, lookupFunc)) {
			return true
		}
		return slices.ContainsFunc(n.Content, walk)
	}
	return walk(&doc)
}

// disarm makes tf safe to look at: every sh: variable becomes the text of
// its command, shown as "$(sh: …)" where a dry run prints it; dotenv: files
// are not read; preconditions (commands) are dropped. The tasks' commands
// are only printed by a dry run, never run.
func disarm(tf *ast.Taskfile) {
	disarmVars(tf.Vars)
	disarmVars(tf.Env)
	tf.Dotenv = nil
	if tf.Tasks == nil {
		return
	}
	for t := range tf.Tasks.Values(nil) {
		for _, vs := range []*ast.Vars{t.Vars, t.Env, t.IncludeVars, t.IncludedTaskfileVars} {
			disarmVars(vs)
		}
		t.Dotenv = nil
		t.Preconditions = nil
		for _, c := range t.Cmds {
			disarmVars(c.Vars)
		}
		for _, d := range t.Deps {
			disarmVars(d.Vars)
		}
	}
}

// disarmVars replaces each sh: variable of vs with its command's text.
func disarmVars(vs *ast.Vars) {
	if vs == nil {
		return
	}
	shown := map[string]string{} // collected first: All holds vs's lock
	for name, v := range vs.All() {
		if v.Sh != nil {
			shown[name] = "$(sh: " + *v.Sh + ")"
		}
	}
	for name, text := range shown {
		vs.Set(name, ast.Var{Value: text})
	}
}
