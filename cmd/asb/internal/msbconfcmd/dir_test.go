package msbconfcmd

import (
	"strings"
	"testing"

	"github.com/agents-sandbox/asb/internal/folderfs"
)

// TestDirIsAStateEntry: the folder msb-conf writes is one of asb's own
// entries of .asb/ (folderfs.StateEntries): without a record of what git
// tracks, a file of .asb/ by another name counts in the trust set.
func TestDirIsAStateEntry(t *testing.T) {
	rest, ok := strings.CutPrefix(Dir, folderfs.StateDir+"/")
	if first, _, _ := strings.Cut(rest, "/"); !ok || !folderfs.IsStateEntry(first) {
		t.Errorf("%s is not under an entry of folderfs.StateEntries", Dir)
	}
}
