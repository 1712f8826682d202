// Package archtest holds the tests of the house rules: which package may
// import which, and the sizes of files and functions.
package archtest

import (
	"bytes"
	"encoding/json"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/agents-sandbox/asb"

type pkg struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Imports    []string // of the non-test files
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Dir,GoFiles,Imports", "./...")
	cmd.Dir = moduleRoot(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages; the test would prove nothing", len(pkgs))
	}
	return pkgs
}

func rel(path string) string { return strings.TrimPrefix(strings.TrimPrefix(path, module), "/") }

const cmdRoom = "cmd/asb/internal/"

// A command package is thin: it may use the shared command utilities, but
// no other command (only root, which wires them all, does).
func TestCommandsImportNoOtherCommand(t *testing.T) {
	checked := 0
	for _, p := range listPackages(t) {
		name := rel(p.ImportPath)
		if !strings.HasPrefix(name, cmdRoom) || name == cmdRoom+"root" || name == cmdRoom+"cmdutil" {
			continue
		}
		checked++
		for _, imp := range p.Imports {
			if r := rel(imp); strings.HasPrefix(r, cmdRoom) && r != cmdRoom+"cmdutil" {
				t.Errorf("%s imports %s: move what they share below cmd/ (outer/, schema/, runner/) or into cmdutil", name, r)
			}
		}
	}
	if checked < 8 {
		t.Errorf("checked %d command packages; expected every command under %s", checked, cmdRoom)
	}
}

// The stand-ins and test environments are for tests only: no product
// package imports them, and neither binary links them (nor go-cmp or the
// testscript library).
func TestProductImportsNoTestDoubles(t *testing.T) {
	for _, p := range listPackages(t) {
		name := rel(p.ImportPath)
		if strings.HasPrefix(name, "internal/testkit") || name == "internal/benchmark" {
			continue // the doubles themselves; the benchmark builds one as a program
		}
		for _, imp := range p.Imports {
			if strings.HasPrefix(rel(imp), "internal/testkit") {
				t.Errorf("%s imports %s outside its tests: test doubles stay out of the product", name, rel(imp))
			}
		}
	}
	cmd := exec.Command("go", "list", "-deps", "./cmd/asb", "./cmd/asb-task")
	cmd.Dir = moduleRoot(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, module+"/schema") {
		t.Fatalf("go list -deps lists no schema package: %q…", deps[:min(5, len(deps))])
	}
	for _, d := range deps {
		if strings.HasPrefix(rel(d), "internal/testkit") || strings.HasPrefix(d, "github.com/google/go-cmp") || strings.HasPrefix(d, "github.com/rogpeppe/go-internal/testscript") {
			t.Errorf("the binaries link %s, a testing package", d)
		}
	}
}

// generator is pure: options in, plan out. Only its writer touches the
// disk, so a render can be tested, diffed and dry-run without I/O.
var writerFiles = []string{"atomic.go", "classify.go", "enotdir.go", "txn.go", "writer.go"}

var ioPackages = []string{"os", "os/exec", "syscall", "io/ioutil", "net", "net/http"}

func TestGeneratorDoesNoIOOutsideItsWriter(t *testing.T) {
	var gen *pkg
	for _, p := range listPackages(t) {
		if rel(p.ImportPath) == "generator" {
			gen = &p
		}
	}
	if gen == nil {
		t.Fatal("no generator package")
	}
	pure := 0
	for _, f := range gen.GoFiles {
		if slices.Contains(writerFiles, f) {
			continue
		}
		pure++
		file, err := parser.ParseFile(token.NewFileSet(), filepath.Join(gen.Dir, f), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, is := range file.Imports {
			path, _ := strconv.Unquote(is.Path.Value)
			if slices.Contains(ioPackages, path) {
				t.Errorf("generator/%s imports %s: only the writer (%s) does I/O", f, path, strings.Join(writerFiles, ", "))
			}
		}
	}
	if pure == 0 {
		t.Error("generator has no file outside the writer: the list above is stale")
	}
	for _, w := range writerFiles {
		if !slices.Contains(gen.GoFiles, w) {
			t.Errorf("the writer file generator/%s does not exist: update writerFiles", w)
		}
	}
}

// asb links no Kubernetes package: agent-sandbox's and Kubernetes' API
// types (and their package initialisation) live in asb-export alone, which
// `asb export kubernetes` runs. asb-export must link them, or the rule
// would check nothing.
func TestAsbLinksNoKubernetes(t *testing.T) {
	deps := func(bin string) []string {
		cmd := exec.Command("go", "list", "-deps", bin)
		cmd.Dir = moduleRoot(t)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", bin, err)
		}
		return strings.Fields(string(out))
	}
	isKube := func(d string) bool { return strings.HasPrefix(d, "k8s.io/") || strings.HasPrefix(d, "sigs.k8s.io/") }
	for _, d := range deps("./cmd/asb") {
		if isKube(d) || d == module+"/kubeexport" {
			t.Errorf("asb links %s: Kubernetes' packages belong in asb-export (kubeexport), which asb export kubernetes runs", d)
		}
	}
	if !slices.ContainsFunc(deps("./cmd/asb-export"), isKube) {
		t.Error("asb-export links no Kubernetes package: this rule checks nothing")
	}
}
