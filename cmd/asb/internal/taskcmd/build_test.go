package taskcmd_test

import (
	"testing"

	"github.com/agents-sandbox/asb/internal/testkit/testenv"
)

// buildAsb compiles asb and asb-task, as a user runs them, once per test
// binary.
func buildAsb(b testing.TB) string { return testenv.BuildAsb(b) }
