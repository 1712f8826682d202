package archtest

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// docs/ARCHITECTURE.md has one table row per package: a package missing
// from it, or a row for a package that is gone, fails.
func TestArchitectureListsEveryPackage(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(moduleRoot(t), "docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z0-9/_-]+)` \\|").FindAllSubmatch(doc, -1) {
		listed = append(listed, string(m[1]))
	}
	var have []string
	for _, p := range listPackages(t) {
		have = append(have, rel(p.ImportPath))
	}
	for _, p := range have {
		if !slices.Contains(listed, p) {
			t.Errorf("docs/ARCHITECTURE.md has no row for %s: add one line saying its job", p)
		}
	}
	for _, p := range listed {
		if !slices.Contains(have, p) {
			t.Errorf("docs/ARCHITECTURE.md lists %s, which is not a package: remove or rename the row", p)
		}
	}
}
