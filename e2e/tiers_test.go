package e2e

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestEveryRealTestHasATier: each real-tool test (func TestReal…, in any
// package of the module) is run by one of the Makefile's named tiers
// (test-msb, test-images, test-boot, test-net, test-agent: a -run pattern
// each, docs/testing.md), so that a developer who touches it can run it
// alone and a CI log can name it. (TestRealNetSecretRotation was once in
// none: make test-net did not run it.)
func TestEveryRealTestHasATier(t *testing.T) {
	mk, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	tiers := map[string]*regexp.Regexp{}
	target := regexp.MustCompile(`(?m)^(test-[a-z]+):.*\n\t\$\(REAL_TEST\) -run '([^']+)'`)
	for _, m := range target.FindAllStringSubmatch(string(mk), -1) {
		tiers[m[1]] = regexp.MustCompile(m[2])
	}
	if len(tiers) < 5 {
		t.Fatalf("found %d real-tool tiers in the Makefile (%v), want test-msb, test-images, test-boot, test-net, test-agent", len(tiers), tiers)
	}
	decl := regexp.MustCompile(`(?m)^func (TestReal\w*)\(`)
	seen := 0
	err = filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && p != ".." || d.Name() == "kubetest" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllStringSubmatch(string(src), -1) {
			seen++
			var in []string
			for name, re := range tiers {
				if re.MatchString(m[1]) {
					in = append(in, name)
				}
			}
			if len(in) == 0 {
				t.Errorf("%s (%s) is in no tier of the Makefile: add it to a make test-… pattern", m[1], p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 40 {
		t.Errorf("found %d real-tool tests, want the module's 50 or more: the walk missed them", seen)
	}
}
