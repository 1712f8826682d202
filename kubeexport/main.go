package kubeexport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/templates"
)

// Name is the exporter's executable, installed beside asb.
const Name = "asb-export"

// NotesFile is where -o DIR keeps the export's notes.
const NotesFile = "NOTES.txt"

// Main is asb-export: `asb export kubernetes` resolves the outer folder
// and runs it with --dir and the user's flags. It returns the exit code.
func Main(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fl := pflag.NewFlagSet(Name, pflag.ContinueOnError)
	fl.SetOutput(io.Discard)
	dir := fl.String("dir", "", "the outer folder")
	out := fl.StringP("output", "o", "", "write one file per resource into this folder")
	var o Options
	fl.StringVar(&o.RuntimeClass, "runtime-class", "gvisor", "")
	fl.StringVar(&o.Image, "image", "", "")
	fl.StringArrayVar(&o.Sessions, "session", nil, "")
	if err := fl.Parse(args); err != nil || *dir == "" || fl.NArg() > 0 {
		fmt.Fprintf(stderr, "%s renders an outer folder as Kubernetes resources: run `asb export kubernetes` instead (%v)\n", Name, err)
		return 2
	}
	ex, err := Run(*dir, o, getenv)
	if err != nil {
		fmt.Fprintf(stderr, "asb export kubernetes: %v\n", err)
		return 1
	}
	if err := Write(ex, *out, stdout); err != nil {
		fmt.Fprintf(stderr, "asb export kubernetes: %v\n", err)
		return 1
	}
	for _, n := range ex.Notes {
		fmt.Fprintln(stderr, "note: "+n)
	}
	return 0
}

// Run reads the outer folder dir, once its content is asb's own render or
// approved by this user (as asb task requires: the export carries the
// folder's agent configs into the cluster), and builds the export.
func Run(dir string, o Options, getenv func(string) string) (*Export, error) {
	v, err := outer.CheckTrust(dir, templates.FS, getenv)
	if err != nil {
		return nil, err
	}
	if !v.Trusted {
		return nil, fmt.Errorf("%s is not approved: %s; review it (asb trust --show) and approve it with asb trust", dir, v.Why)
	}
	src, err := Read(dir, templates.FS)
	if err != nil {
		return nil, err
	}
	return Build(src, o)
}

// Marshal is one object as YAML, led by a line saying what made it.
// An empty status (which the types always write) is dropped.
func Marshal(obj any) ([]byte, error) {
	js, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(js, &m); err != nil {
		return nil, err
	}
	if st, ok := m["status"].(map[string]any); ok && len(st) == 0 {
		delete(m, "status")
	}
	b, err := yaml.Marshal(m)
	if err != nil {
		return nil, err
	}
	return append([]byte("# Made by asb export kubernetes; holds no secret value.\n"), b...), nil
}

// Write prints the export to w as one YAML stream (kubectl apply -f -),
// or, with dir, writes one file per object and NOTES.txt into dir.
func Write(ex *Export, dir string, w io.Writer) error {
	var files []generator.PendingFile
	var stream bytes.Buffer
	for i, o := range ex.Objects {
		b, err := Marshal(o.Obj)
		if err != nil {
			return fmt.Errorf("%s: %w", o.File, err)
		}
		files = append(files, generator.PendingFile{Path: o.File, Data: b, Mode: 0o644})
		if i > 0 {
			stream.WriteString("---\n")
		}
		stream.Write(b)
	}
	if dir == "" {
		_, err := w.Write(stream.Bytes())
		return err
	}
	notes := "What `asb export kubernetes` could not carry over, and what to do:\n\n- " + strings.Join(ex.Notes, "\n- ") + "\n"
	files = append(files, generator.PendingFile{Path: NotesFile, Data: []byte(notes), Mode: 0o644})
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := generator.WriteFilesAtomic(dir, files); err != nil {
		return fmt.Errorf("write %s: %w", dir, err)
	}
	fmt.Fprintf(w, "wrote %d resources and %s into %s; apply them with kubectl apply -f %s\n", len(ex.Objects), NotesFile, dir, dir)
	return nil
}
