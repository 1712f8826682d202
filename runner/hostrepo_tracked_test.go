package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenHostRepoRefusesWhatTheCloneBrought: a host repository the outer
// folder's git tracks came from whoever pushed the clone (its config is
// theirs): refused, whether a file under .asb/git is tracked, or an entry
// above it (a submodule at .asb, a link at .asb/git) brought what is there.
// Untracked, it is made and opened.
func TestOpenHostRepoRefusesWhatTheCloneBrought(t *testing.T) {
	const blob = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
	cases := map[string]string{
		"a file under .asb/git":    "100644," + blob + ",.asb/git/config",
		"a submodule at .asb":      "160000,0123456789abcdef0123456789abcdef01234567,.asb",
		"a link at .asb/git":       "120000," + blob + ",.asb/git",
		"a file under .asb/import": "100644," + blob + ",.asb/import/workspace/HEAD",
	}
	for name, entry := range cases {
		t.Run(name, func(t *testing.T) {
			dir, _, _ := folderWithWorkspace(t)
			vm(t, dir, "init", "-q")
			if _, err := OpenHostRepo(context.Background(), Git{}, dir); err != nil {
				t.Fatalf("nothing tracked: %v", err)
			}
			if err := os.RemoveAll(filepath.Join(dir, ".asb")); err != nil {
				t.Fatal(err)
			}
			vm(t, dir, "update-index", "--add", "--cacheinfo", entry)
			_, err := OpenHostRepo(context.Background(), Git{}, dir)
			if err == nil || !strings.Contains(err.Error(), "refused: the outer folder's git tracks .asb/") {
				t.Fatalf("with %s tracked: err = %v, want the refusal", entry, err)
			}
			if _, serr := os.Stat(filepath.Join(dir, HostRepoDir)); serr == nil {
				t.Errorf("refused, yet %s was made", HostRepoDir)
			}
		})
	}
}
