package archtest

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The house habits: a product file reads in one sitting, a function in one
// screen. docs/size-exceptions.txt lists what is over on purpose, each with
// its reason; an entry that no longer applies fails too, so the list stays
// true.
const (
	maxFileLines = 400
	maxFuncLines = 60
)

func TestSizes(t *testing.T) {
	root := moduleRoot(t)
	allowed := readExceptions(t, filepath.Join(root, "docs", "size-exceptions.txt"))
	var over []string
	for _, file := range productFiles(t, root) {
		over = append(over, sizesOf(t, root, file)...)
	}
	used := map[string]bool{}
	for _, o := range over {
		if _, ok := allowed[o]; ok {
			used[o] = true
			continue
		}
		key, _, _ := strings.Cut(o, " (")
		if _, ok := allowed[key]; ok {
			used[key] = true
			continue
		}
		t.Errorf("%s: split it by job, or list it in docs/size-exceptions.txt with a reason", o)
	}
	for k := range allowed {
		if !used[k] {
			t.Errorf("docs/size-exceptions.txt lists %q, which is no longer over the limit: remove the line", k)
		}
	}
}

// sizesOf returns "FILE" or "FILE FUNC" entries (with their length in
// parentheses) over the limits.
func sizesOf(t *testing.T, root, file string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(root, file)
	rel = filepath.ToSlash(rel)
	var out []string
	if n := fset.File(f.Pos()).LineCount(); n > maxFileLines {
		out = append(out, fmt.Sprintf("%s (%d lines)", rel, n))
	}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
		if n > maxFuncLines {
			out = append(out, fmt.Sprintf("%s %s (%d lines)", rel, funcName(fn), n))
		}
	}
	return out
}

func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	typ := fn.Recv.List[0].Type
	if s, ok := typ.(*ast.StarExpr); ok {
		typ = s.X
	}
	if g, ok := typ.(*ast.IndexExpr); ok {
		typ = g.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}

// productFiles are the Go files that build into asb: not tests, not the
// test doubles, not generated code.
func productFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			switch {
			case rel != "." && (strings.HasPrefix(name, ".") || name == "testdata"),
				filepath.ToSlash(rel) == "internal/testkit",
				filepath.ToSlash(rel) == "e2e":
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// readExceptions reads lines "PATH[ FUNC]  # reason"; a line without a
// reason is an error.
func readExceptions(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		entry, reason, _ := strings.Cut(line, "#")
		entry, reason = strings.Join(strings.Fields(entry), " "), strings.TrimSpace(reason)
		if reason == "" {
			t.Errorf("%s:%d: %q has no reason: add \"# why it is over\"", path, n, entry)
		}
		out[entry] = reason
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test")
		}
		dir = parent
	}
}
