package schema

import (
	"fmt"
)

// Sessions: an agent on its own branch of the workspace, in a checkout and
// a VM of its own (asb session). The rules on their names live here once;
// every door (asb session new/rm/diff, asb task --session, the session
// records asb reads back) applies them.
const (
	// SessionBranchPrefix starts every session's branch: asb/NAME.
	SessionBranchPrefix = "asb/"
	// SessionsDir holds the sessions' host-local state, under .asb/ (git-ignored):
	// SessionsDir/NAME/{session.yaml,sandbox.yaml,workspace/}.
	SessionsDir = ".asb/sessions"
	// ReservedSessionName is no session's name: the host repository
	// (.asb/git) keeps workspace/'s branches under it.
	ReservedSessionName = "workspace"
	// MaxSessionName keeps <slug>-<agent>-<NAME>-<timestamp> a valid msb name.
	MaxSessionName = 24
)

var sessionNameRe = lazyRegexp(`^[a-z][a-z0-9-]*$`)

// SessionName is the rule on a session's name: it becomes part of a VM's
// and a volume's name, a git branch (asb/NAME) and a folder under .asb/.
func SessionName(s string) *RuleError {
	fix := "use lowercase letters, digits and dashes, starting with a letter, e.g. fix-login"
	switch {
	case s == "":
		return &RuleError{Why: "a session needs a name", Fix: fix}
	case len(s) > MaxSessionName:
		return &RuleError{Value: s, Why: fmt.Sprintf("is longer than %d characters (it becomes part of the VM's name)", MaxSessionName), Fix: "use a shorter name"}
	case !sessionNameRe().MatchString(s) || s[len(s)-1] == '-':
		return &RuleError{Value: s, Why: "is not a valid session name (it becomes a VM name and the git branch asb/NAME)", Fix: fix}
	case s == ReservedSessionName:
		return &RuleError{Value: s, Why: "is reserved: the host repository's branches workspace/BRANCH are workspace/'s, and a session's branch there is its name", Fix: "name the session otherwise"}
	}
	return nil
}

// SessionPaths are where a session's host-local state lives, relative to
// the outer folder. They are computed from the name, never read from a
// file, so no record can point a session anywhere else.
type SessionPaths struct {
	Dir       string `json:"dir"`       // .asb/sessions/NAME
	Record    string `json:"record"`    // .asb/sessions/NAME/session.yaml
	Conf      string `json:"conf"`      // .asb/sessions/NAME/sandbox.yaml: derived from sandbox.yaml
	Workspace string `json:"workspace"` // .asb/sessions/NAME/workspace: the checkout, /workspace in its VM
}

// SessionPathsOf returns the paths of session name (checked by SessionName).
func SessionPathsOf(name string) SessionPaths {
	d := SessionsDir + "/" + name
	return SessionPaths{Dir: d, Record: d + "/session.yaml", Conf: d + "/" + SandboxFile, Workspace: d + "/workspace"}
}
