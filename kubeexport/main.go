package kubeexport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/schema"
	"github.com/agents-sandbox/asb/templates"
)

// Name is the exporter's executable, installed beside asb.
const Name = "asb-export"

// NotesFile is where -o DIR keeps the export's notes.
const NotesFile = "NOTES.txt"

// Cluster is what asb-export does with a cluster: apply an export, and
// run the agent of a session there. Its code (client-go) lives in
// kubeexport/cluster; Main without one only renders.
type Cluster interface {
	Apply(ctx context.Context, ex *Export, src *Source, o Options, out io.Writer) error
	Agent(ctx context.Context, dir string, src *Source, session string, io IO) error
}

// IO are the streams of an attached agent.
type IO struct {
	In       *os.File
	Out, Err io.Writer
}

// Main is asb-export: `asb export kubernetes` resolves the outer folder
// and runs it with --dir and the user's flags. It returns the exit code.
func Main(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	return MainWith(context.Background(), nil, args, IO{In: os.Stdin, Out: stdout, Err: stderr}, getenv)
}

// MainWith is Main with a cluster to apply to (--apply) and to run an
// agent in (the kube-agent command of asb kube agent).
func MainWith(ctx context.Context, c Cluster, args []string, std IO, getenv func(string) string) int {
	if len(args) > 0 && args[0] == "kube-agent" {
		return agentMain(ctx, c, args[1:], std, getenv)
	}
	fl := pflag.NewFlagSet(Name, pflag.ContinueOnError)
	fl.SetOutput(io.Discard)
	dir := fl.String("dir", "", "the outer folder")
	out := fl.StringP("output", "o", "", "write one file per resource into this folder")
	apply := fl.Bool("apply", false, "apply to the cluster of the user's kubeconfig")
	var o Options
	fl.StringVar(&o.RuntimeClass, "runtime-class", "gvisor", "")
	fl.StringVar(&o.Image, "image", "", "")
	fl.StringArrayVar(&o.Sessions, "session", nil, "")
	fl.StringVar(&o.Egress, "egress", EgressCilium, "")
	fl.StringVar(&o.StorageClass, "storage-class", "", "")
	if err := fl.Parse(args); err != nil || *dir == "" || fl.NArg() > 0 {
		fmt.Fprintf(std.Err, "%s renders an outer folder as Kubernetes resources: run `asb export kubernetes` instead (%v)\n", Name, err)
		return 2
	}
	ex, src, err := Run(*dir, o, getenv)
	if err != nil {
		fmt.Fprintf(std.Err, "asb export kubernetes: %v\n", err)
		return 1
	}
	if *apply {
		err = applyWith(ctx, c, ex, src, o, std.Out)
	} else {
		err = Write(ex, *out, std.Out)
	}
	if err != nil {
		fmt.Fprintf(std.Err, "asb export kubernetes: %v\n", err)
		return 1
	}
	for _, n := range ex.Notes {
		fmt.Fprintln(std.Err, "note: "+n)
	}
	return 0
}

func applyWith(ctx context.Context, c Cluster, ex *Export, src *Source, o Options, out io.Writer) error {
	if c == nil {
		return errors.New("--apply: this asb-export applies nothing (it was built without a cluster client)")
	}
	return c.Apply(ctx, ex, src, o, out)
}

// agentMain is asb kube agent: the session's agent on the cluster.
func agentMain(ctx context.Context, c Cluster, args []string, std IO, getenv func(string) string) int {
	fl := pflag.NewFlagSet(Name, pflag.ContinueOnError)
	fl.SetOutput(io.Discard)
	dir := fl.String("dir", "", "the outer folder")
	session := fl.String("session", "", "the session")
	if err := fl.Parse(args); err != nil || *dir == "" || fl.NArg() > 0 {
		fmt.Fprintf(std.Err, "%s kube-agent runs a session's agent on the cluster: run `asb kube agent` instead (%v)\n", Name, err)
		return 2
	}
	err := func() error {
		if c == nil {
			return errors.New("this asb-export reaches no cluster (it was built without a cluster client)")
		}
		if *session != "" {
			if re := schema.SessionName(*session); re != nil {
				return fmt.Errorf("--session: %w", re)
			}
		}
		src, err := ReadApproved(*dir, getenv)
		if err != nil {
			return err
		}
		return c.Agent(ctx, *dir, src, *session, std)
	}()
	if err != nil {
		fmt.Fprintf(std.Err, "asb kube agent: %v\n", err)
		return 1
	}
	return 0
}

// Run reads the outer folder dir, once its content is asb's own render or
// approved by this user (as asb task requires: the export carries the
// folder's agent configs into the cluster), and builds the export.
func Run(dir string, o Options, getenv func(string) string) (*Export, *Source, error) {
	src, err := ReadApproved(dir, getenv)
	if err != nil {
		return nil, nil, err
	}
	ex, err := Build(src, o)
	return ex, src, err
}

// Source_ reads the approved outer folder dir.
func ReadApproved(dir string, getenv func(string) string) (*Source, error) {
	v, err := outer.CheckTrust(dir, templates.FS, getenv)
	if err != nil {
		return nil, err
	}
	if !v.Trusted {
		return nil, fmt.Errorf("%s is not approved: %s; review it (asb trust --show) and approve it with asb trust", dir, v.Why)
	}
	return Read(dir, templates.FS)
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
