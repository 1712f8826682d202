package schema

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"go.yaml.in/yaml/v3"
)

// The committed record of how an outer folder was made (asb.yaml), and the
// bytes asb wrote for each file (.asb-base/), which `asb update` merges
// against on any clone. Runtime state stays in .asb/, git-ignored.
const (
	RecordFile = "asb.yaml"
	BaseDir    = ".asb-base"
	SchemaDir  = ".schemas"
	// RecordFormat is the record's format; an asb that reads an older one
	// reads it, a newer one is refused with "upgrade asb".
	RecordFormat = 1
)

// WorkspaceOrigin is where workspace/ comes from: a git repository
// teammates clone (URL, branch, the commit it was at), a folder of its
// author's machine (Local: "local, not shared"), or nothing (an empty
// workspace/).
type WorkspaceOrigin struct {
	URL    string `yaml:"url,omitempty"`
	Branch string `yaml:"branch,omitempty"`
	Commit string `yaml:"commit,omitempty"`
	// Local is set when workspace/ came from a folder of its author's
	// machine that teammates cannot clone: LocalCheckout or LocalFolder.
	Local string `yaml:"local,omitempty"`
}

// The values of WorkspaceOrigin.Local.
const (
	// LocalCheckout: a git checkout with no remote teammates can clone
	// (none, or a path of that machine); workspace/ is a clone of it.
	LocalCheckout = "checkout"
	// LocalFolder: a plain folder, not a git checkout; workspace/ is a
	// copy of it.
	LocalFolder = "folder"
)

// LocalNote says what a local workspace means for a teammate, for the
// record's comment and the messages of validate, sync and session new.
func (o WorkspaceOrigin) LocalNote() string {
	switch o.Local {
	case LocalCheckout:
		return "local, not shared: workspace/ was cloned from a git checkout on its author's machine that has no remote a teammate can clone"
	case LocalFolder:
		return "local, not shared: workspace/ was copied from a folder (not a git checkout) on its author's machine"
	}
	return ""
}

// Record is asb.yaml.
type Record struct {
	Format       int             `yaml:"format"`
	Asb          string          `yaml:"asb"` // the version of asb that wrote it
	Agent        string          `yaml:"agent"`
	AgentVersion string          `yaml:"agent_version"`
	Answers      InitOptions     `yaml:"answers"`
	Workspace    WorkspaceOrigin `yaml:"workspace"`
}

// NoRecordError is a folder without asb.yaml.
type NoRecordError struct{ Dir string }

func (e *NoRecordError) Error() string {
	return fmt.Sprintf("%s has no %s, the record asb init writes: lay an outer folder down with asb init --agent NAME (an outer folder made by an older asb gets one from asb init --agent NAME run again in it)", e.Dir, RecordFile)
}

// ReadRecord reads dir's asb.yaml. A record of a newer format is refused
// with the fix (upgrade asb), never misread.
func ReadRecord(dir string) (*Record, error) {
	raw, err := ReadFile(filepath.Join(dir, RecordFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &NoRecordError{Dir: dir}
	}
	if err != nil {
		return nil, err
	}
	var probe struct {
		Format int    `yaml:"format"`
		Asb    string `yaml:"asb"`
	}
	if err := yaml.Unmarshal(raw, &probe); err != nil {
		return nil, fmt.Errorf("%s: %w (it is written by asb; restore it from git)", RecordFile, err)
	}
	if probe.Format > RecordFormat {
		return nil, fmt.Errorf("%s was written by asb %s (record format %d); this asb reads format %d: upgrade asb", RecordFile, probe.Asb, probe.Format, RecordFormat)
	}
	if probe.Format < 1 {
		return nil, fmt.Errorf("%s has no format: it is written by asb; restore it from git", RecordFile)
	}
	var r Record
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: %w (it is written by asb; restore it from git)", RecordFile, err)
	}
	// A name an earlier asb took (a digit first, a dash last: ValidProjectName)
	// still names this folder's VMs and volumes; only the Kubernetes export,
	// whose API server refuses it, says so (kubeexport). A new name is judged
	// by ProjectName at init.
	answers := r.Answers
	if ValidProjectName(answers.Name) && ProjectName(answers.Name) != nil {
		answers.Name = "recorded-name"
	}
	if err := answers.Validate(); err != nil {
		return nil, fmt.Errorf("%s: answers: %w", RecordFile, err)
	}
	return &r, nil
}

// MarshalRecord writes r as asb.yaml, with a header that says what it is.
func MarshalRecord(r *Record) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("# asb.yaml: how asb made this outer folder (asb writes it; commit it).\n" +
		"# `asb sync` sets up a fresh clone from it; `asb update` renders the\n" +
		"# templates of a newer asb with these answers and merges them into your\n" +
		"# files, against the bytes asb wrote (" + BaseDir + "/).\n")
	var doc yaml.Node
	if err := doc.Encode(r); err != nil {
		return nil, err
	}
	if note := r.Workspace.LocalNote(); note != "" && doc.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(doc.Content); i += 2 {
			if doc.Content[i].Value == "workspace" {
				doc.Content[i].LineComment = "# " + note
			}
		}
	}
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	return b.Bytes(), enc.Close()
}

//go:embed sandbox.schema.json secrets.schema.json
var jsonSchemas embed.FS

// JSONSchemaNames are the file names of JSONSchemas.
var JSONSchemaNames = []string{"sandbox.schema.json", "secrets.schema.json"}

// JSONSchemas are the JSON Schemas of sandbox.yaml and secrets.yaml, by
// file name; asb writes them into each outer folder's .schemas/.
func JSONSchemas() map[string][]byte {
	out := map[string][]byte{}
	for _, n := range JSONSchemaNames {
		b, _ := jsonSchemas.ReadFile(n)
		out[n] = b
	}
	return out
}
