package testenv

import (
	"os"
	"testing"

	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/templates"
)

// Approve records this user's approval of the outer folder dir as it is,
// as asb init does for the folder it writes (and asb trust for any
// other): a test that lays a folder down with the generator, or edits one
// by hand, approves it before asb runs it. Approvals go where
// $XDG_STATE_HOME says (PrivateState).
func Approve(t testing.TB, dir string) {
	t.Helper()
	v, err := outer.CheckTrust(dir, templates.FS, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	if !v.Trusted {
		if err := v.Approve("a test, as asb trust"); err != nil {
			t.Fatal(err)
		}
	}
}
