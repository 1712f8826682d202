package initcmd

import (
	"os"
	"testing"

	"github.com/agents-sandbox/asb/internal/testkit/testenv"
)

// TestMain gives the tests a state and temporary folder of their own: the
// folders' lock files and approvals go with the run (testenv.PrivateState).
func TestMain(m *testing.M) {
	clean := testenv.PrivateState()
	code := m.Run()
	clean()
	os.Exit(code)
}
