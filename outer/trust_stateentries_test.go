package outer_test

import (
	"strings"
	"testing"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/folderfs"
	"github.com/agents-sandbox/asb/schema"
	"github.com/agents-sandbox/asb/serve"
)

// TestStateEntries: every path asb writes under .asb/ outside runner and
// msbconfcmd (which hold their own) and outer's review (reviewDir, in
// TestUntrackedFolderCountsEveryFileBelowTheTop) starts with an entry folderfs.StateEntries names,
// and nothing else under .asb/ is one. Without a record of what git
// tracks, a file of .asb/ by another name counts in the trust set.
func TestStateEntries(t *testing.T) {
	for _, p := range []string{generator.ManifestPath, schema.SessionsDir + "/x/sandbox.yaml", serve.RecordFile, serve.SeenDir} {
		rest, ok := strings.CutPrefix(p, folderfs.StateDir+"/")
		first, _, _ := strings.Cut(rest, "/")
		if !ok || !folderfs.IsStateEntry(first) {
			t.Errorf("%s: %q is not in folderfs.StateEntries", p, first)
		}
	}
	for _, name := range []string{"lint.sh", "state.yaml.bak", ".state.yaml.asb-0123456789abcdef", ".lint.sh.asb-0123456789abcdef", "git.new-x"} {
		if want := name == ".state.yaml.asb-0123456789abcdef"; folderfs.IsStateEntry(name) != want {
			t.Errorf("IsStateEntry(%q) = %v", name, !want)
		}
	}
}
