package runner

import (
	"strings"
	"testing"

	"github.com/agents-sandbox/asb/internal/folderfs"
)

// TestStateEntries: every path runner writes under .asb/ starts with an
// entry folderfs.StateEntries names. Without a record of what git tracks,
// a file of .asb/ by another name counts in the trust set, so one asb
// wrote would make the folder "changed since you approved it".
func TestStateEntries(t *testing.T) {
	for _, p := range []string{StatePath, StateLockPath, RunLockPath, TaskfileFactsPath, WarmDir, SecretsStampDir,
		legacyStampPath, secretsKeyPath, HostRepoDir, importDir, hostRepoLock} {
		rest, ok := strings.CutPrefix(p, folderfs.StateDir+"/")
		first, _, _ := strings.Cut(rest, "/")
		if !ok || !folderfs.IsStateEntry(first) {
			t.Errorf("%s: %q is not in folderfs.StateEntries", p, first)
		}
	}
}
