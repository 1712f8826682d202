package runner

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// The Taskfile's checks of the VM (vm:create's and vm:start's status) each
// start msb, and vm:start's a grep too: a warm `asb task agent` ran three
// processes before its one msb exec. A running VM passes both, and whether
// it runs is one flock(2) away (MSB.IsRunning), so the warm path proves them
// that way, and runs a check itself only when that proof is not there (a
// stopped VM, a removed one, another msb): what it then decides is the
// check's own answer, as before.

// VMCheck returns the VM a status command checks, when the command is one
// that a running VM passes, as the generated Taskfile writes them:
//
//	msb inspect VM [>/dev/null] [2>&1]
//	msb status VM --format json [2>/dev/null] | grep -q '"status": *"Running"'
//
// Any other command (a user's own check, a negated one) returns "": it is
// run as written.
func VMCheck(cmd string) string {
	f, err := syntax.NewParser().Parse(strings.NewReader(cmd), "")
	if err != nil || len(f.Stmts) != 1 {
		return ""
	}
	st := f.Stmts[0]
	if st.Negated || st.Background || st.Coprocess {
		return ""
	}
	switch c := st.Cmd.(type) {
	case *syntax.CallExpr:
		if vm, ok := msbCall(st, c, "inspect"); ok {
			return vm
		}
	case *syntax.BinaryCmd:
		if c.Op != syntax.Pipe || len(st.Redirs) > 0 {
			return ""
		}
		left, ok1 := c.X.Cmd.(*syntax.CallExpr)
		right, ok2 := c.Y.Cmd.(*syntax.CallExpr)
		if !ok1 || !ok2 || c.X.Negated || c.Y.Negated || len(c.Y.Redirs) > 0 {
			return ""
		}
		vm, ok := msbCall(c.X, left, "status", "--format", "json")
		grep, gok := words(right)
		if ok && gok && len(grep) == 3 && grep[0] == "grep" && grep[1] == "-q" && grep[2] == `"status": *"Running"` {
			return vm
		}
	}
	return ""
}

// Judged is s with IsDir and Argv set as its command makes them: the path
// a precondition or status check only tests to be a folder (DirCheck);
// the words of a command that is one plain program call (plainArgv). The
// one place a record's steps are judged so, when the engine records them
// and when a run's arguments rewrite them: a warm run then parses no
// shell.
func (s WarmStep) Judged() WarmStep {
	s.IsDir, s.Argv = "", nil
	switch s.Kind {
	case "precondition", "status":
		s.IsDir = DirCheck(s.Cmd)
	case "cmd":
		if argv, ok := plainArgv(s.Cmd); ok {
			s.Argv = argv
		}
	}
	return s
}

// DirCheck returns the path a check tests to be a folder, when the check is
// only that, as the generated Taskfile writes vm:create's precondition:
//
//	[ -d PATH ]   or   test -d PATH
//
// with PATH a literal word. Such a check is a stat(2) (the shell's test
// follows links too): the warm run answers it so, without a shell. Any
// other command returns "" and runs as written.
func DirCheck(cmd string) string {
	f, err := syntax.NewParser().Parse(strings.NewReader(cmd), "")
	if err != nil || len(f.Stmts) != 1 {
		return ""
	}
	st := f.Stmts[0]
	c, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || st.Negated || st.Background || st.Coprocess || len(st.Redirs) > 0 || len(c.Assigns) > 0 {
		return ""
	}
	args := c.Args
	switch {
	case len(args) == 4 && bare(args[0], "[") && bare(args[3], "]"):
		args = args[1:3]
	case len(args) == 3 && bare(args[0], "test"):
		args = args[1:]
	default:
		return ""
	}
	w, ok := words(&syntax.CallExpr{Args: args})
	if !ok || w[0] != "-d" {
		return ""
	}
	return w[1]
}

// bare reports whether w is the unquoted word s.
func bare(w *syntax.Word, s string) bool {
	if len(w.Parts) != 1 {
		return false
	}
	l, ok := w.Parts[0].(*syntax.Lit)
	return ok && l.Value == s
}

// msbCall matches `msb VERB VM TAIL…` with only quiet redirections
// (to /dev/null, or 2>&1) and returns VM.
func msbCall(st *syntax.Stmt, c *syntax.CallExpr, verb string, tail ...string) (string, bool) {
	w, ok := words(c)
	if !ok || len(c.Assigns) > 0 || len(w) != 3+len(tail) || w[0] != "msb" || w[1] != verb || w[2] == "" || strings.HasPrefix(w[2], "-") {
		return "", false
	}
	for i, t := range tail {
		if w[3+i] != t {
			return "", false
		}
	}
	for _, r := range st.Redirs {
		target, ok := literal(r.Word)
		quiet := (r.Op == syntax.RdrOut || r.Op == syntax.AppOut) && target == "/dev/null" ||
			r.Op == syntax.DplOut && target == "1" && r.N != nil && r.N.Value == "2"
		if !ok || !quiet {
			return "", false
		}
	}
	return w[2], true
}

// words is a call's arguments when every one is a literal word.
func words(c *syntax.CallExpr) ([]string, bool) {
	out := make([]string, 0, len(c.Args))
	for _, a := range c.Args {
		lit, ok := literal(a)
		if !ok {
			return nil, false
		}
		out = append(out, lit)
	}
	return out, true
}
