package runner

import (
	"slices"
	"strings"
)

// Looking reports whether s only looks at the Taskfile (--dry, --list,
// --summary): it runs nothing of it (runner/engine/looking.go).
func (s EngineSpec) Looking() bool { return s.List || s.Dry || s.Summary != "" }

// A run that only looks needs no value of the user's environment: go-task
// templates a task's desc:, summary: and a dry run's commands with every
// variable of the environment, so an unapproved Taskfile's
// `desc: '{{.AWS_SECRET_ACCESS_KEY}}'` (or `{{b64enc .OPENCODE_API_KEY}}`,
// which no redactor of literal values catches) would print it. Such a run
// gets only what says where things are and how to print them.
var (
	lookingKeeps    = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "COLORTERM", "NO_COLOR", "COLUMNS", "LANG", "TZ", "TMPDIR", "PWD"}
	lookingPrefixes = []string{"LC_", "XDG_", "ASB_", "TASK_"}
	// lookingDrops are asb's own variables that hold a secret, which the
	// prefixes above would keep: asb serve's password (serve.PasswordVar),
	// read from the environment before secrets.env.
	lookingDrops = []string{"ASB_SERVE_PASSWORD"}
)

// LookingEnv is env (KEY=VALUE entries) without what a looking run must not
// see: every variable but lookingKeeps and those that start with one of
// lookingPrefixes (asb's, go-task's, the locale's and the XDG folders'),
// and never one of lookingDrops.
func LookingEnv(env []string) []string {
	out := make([]string, 0, len(lookingKeeps))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if slices.Contains(lookingDrops, k) {
			continue
		}
		if slices.Contains(lookingKeeps, k) || slices.ContainsFunc(lookingPrefixes, func(p string) bool { return strings.HasPrefix(k, p) }) {
			out = append(out, kv)
		}
	}
	return out
}
