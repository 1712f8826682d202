package folderfs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenRefusesALinkedOwnFolder: .asb, .task and .asb-base as links
// (into workspace/, where the VM writes, or anywhere) make the folder
// refused by every command that opens it; a link to a folder inside it
// under another name (a bind's source) is not.
func TestOpenRefusesALinkedOwnFolder(t *testing.T) {
	for _, own := range OwnFolders {
		t.Run(own, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, "workspace", own), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("workspace", filepath.Join(dir, "data")); err != nil {
				t.Fatal(err)
			}
			r, err := Open(dir)
			if err != nil {
				t.Fatalf("a folder without links of its own: %v", err)
			}
			_ = r.Close()
			if err := os.Symlink(filepath.Join("workspace", own), filepath.Join(dir, own)); err != nil {
				t.Fatal(err)
			}
			_, err = Open(dir)
			var le *OwnLinkError
			if !errors.As(err, &le) || le.Name != own || le.Target != filepath.Join("workspace", own) {
				t.Fatalf("Open with %s a link = %v, want an OwnLinkError naming it and its target", own, err)
			}
			for _, want := range []string{"not supported by asb", own + " is a link", "git rm --cached " + own} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the refusal %q does not say %q", err, want)
				}
			}
		})
	}
}
