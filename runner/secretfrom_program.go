package runner

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Whether a secret's command can run here is judged without running it:
// `asb validate`, `boundary` and `doctor` only look. The command is read
// as sh reads it, and each program it names by a plain word (not one a
// variable or a substitution makes) must be a shell builtin, a function
// the command defines, or an executable file: on PATH for a bare name, at
// the path (relative to the outer folder, where `asb secret exec` runs it)
// for one with a slash.

// shBuiltins are the names sh runs without looking them up on PATH: POSIX's
// special and regular builtins, the reserved words, and what dash and bash
// add that a one-line command would use.
var shBuiltins = []string{".", ":", "[", "alias", "bg", "break", "cd", "command", "continue", "echo", "eval",
	"exec", "exit", "export", "false", "fg", "getopts", "hash", "jobs", "kill", "local", "printf", "pwd",
	"read", "readonly", "return", "set", "shift", "test", "times", "trap", "true", "type", "ulimit",
	"umask", "unalias", "unset", "wait", "!", "{", "}"}

// SecretCommandsMissing maps each secret of dir that has a recorded command
// to "" when the command's programs are found here, or to why one is not
// ("program \"gh\" is not found on PATH"). The command is never run and
// never part of the reason.
func SecretCommandsMissing(dir string, getenv func(string) string) map[string]string {
	out := map[string]string{}
	store, err := SecretCommandStore(getenv)
	if err != nil {
		return out
	}
	cmds, _ := store.Load(dir)
	for name, command := range cmds {
		out[name] = MissingProgram(command, dir, getenv)
	}
	return out
}

// MissingProgram returns why command cannot run in dir with getenv's PATH
// and HOME, or "" when every program it names is found.
func MissingProgram(command, dir string, getenv func(string) string) string {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(command), "")
	if err != nil {
		return "sh cannot read it (" + err.Error() + ")"
	}
	var funcs, progs []string
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.FuncDecl:
			funcs = append(funcs, n.Name.Value)
		case *syntax.CallExpr:
			if len(n.Args) > 0 {
				if lit := n.Args[0].Lit(); lit != "" {
					progs = append(progs, lit)
				}
			}
		}
		return true
	})
	for _, p := range progs {
		if slices.Contains(shBuiltins, p) || slices.Contains(funcs, p) {
			continue
		}
		if why := findProgram(p, dir, getenv); why != "" {
			return why
		}
	}
	return ""
}

// findProgram says why p is not an executable file sh would run, or "".
func findProgram(p, dir string, getenv func(string) string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home := getenv("HOME"); filepath.IsAbs(home) {
			p = filepath.Join(home, rest)
		}
	}
	if strings.Contains(p, "/") {
		path := p
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		if !executable(path) {
			return "program " + strconv.Quote(p) + " is not an executable file"
		}
		return ""
	}
	for _, d := range filepath.SplitList(getenv("PATH")) {
		if d != "" && executable(filepath.Join(d, p)) {
			return ""
		}
	}
	return "program " + strconv.Quote(p) + " is not found on PATH"
}

func executable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
