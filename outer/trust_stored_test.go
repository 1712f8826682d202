package outer

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agents-sandbox/asb/templates"
)

// countingFS is asb's templates, counting what is opened of them: a render
// opens them, a check by approvals alone does not.
type countingFS struct{ opens *atomic.Int64 }

func (c countingFS) Open(name string) (fs.File, error) {
	c.opens.Add(1)
	return templates.FS.Open(name)
}

// TestCheckStoredRendersNothing: after an edit of an approved folder,
// CheckStored (what asb init and ApproveEdit approve from) and ApproveEdit
// read no template, says not trusted, and an approval of it is what the next full
// check finds: approved by you.
func TestCheckStoredRendersNothing(t *testing.T) {
	dir, j := cacheFolder(t)
	before, err := j.Check(dir)
	if err != nil || !before.Trusted {
		t.Fatalf("the approved folder: %+v, %v", before, err)
	}
	p := filepath.Join(dir, "opencode", "opencode.json")
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, append(raw, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	var opens atomic.Int64
	j.Templates = countingFS{&opens}
	v, err := j.CheckStored(dir)
	if err != nil || v.Trusted || v.Render != nil {
		t.Fatalf("after the edit: %+v, %v; want not trusted, no render", v, err)
	}
	if n := opens.Load(); n != 0 {
		t.Errorf("CheckStored opened %d template files", n)
	}
	if _, err := j.Check(dir); err != nil || opens.Load() == 0 {
		t.Fatalf("the full check opened no template (%v): this test counts nothing", err)
	}
	opens.Store(0)
	if err := ApproveEdit(dir, before, j); err != nil {
		t.Fatal(err)
	}
	if n := opens.Load(); n != 0 {
		t.Errorf("ApproveEdit opened %d template files", n)
	}
	after, err := j.Check(dir)
	if err != nil || !after.Trusted || !strings.Contains(after.Why, "approved by you") {
		t.Errorf("after ApproveEdit: %+v, %v", after, err)
	}
}
