package generator

import (
	"path"

	"github.com/agents-sandbox/asb/schema"
)

// withRecord adds what makes an outer folder shareable: the JSON Schemas its
// YAML files name (.schemas/), the record of the answers (asb.yaml), and
// the bytes of each file asb wrote (.asb-base/), which `asb update` merges
// against on any clone.
func withRecord(plan *Plan, opts schema.InitOptions, agentVersion string) error {
	for name, content := range schema.JSONSchemas() {
		plan.Put(File{Path: path.Join(schema.SchemaDir, name), Mode: ModeFile, Content: content})
	}
	rec := Record(opts, agentVersion)
	raw, err := schema.MarshalRecord(rec)
	if err != nil {
		return err
	}
	plan.Put(File{Path: schema.RecordFile, Mode: ModeFile, Content: raw})
	for _, f := range append([]File(nil), plan.Files...) {
		if f.Dir || f.Path == "secrets.env" || f.Path == schema.RecordFile {
			continue
		}
		plan.Put(File{Path: path.Join(schema.BaseDir, f.Path), Mode: ModeFile, Content: f.Content})
	}
	return nil
}

// Record is the asb.yaml of opts: the answers as given, asb's version and
// the workspace's origin from opts.Record (when init knows them).
func Record(opts schema.InitOptions, agentVersion string) *schema.Record {
	rec := &schema.Record{Format: schema.RecordFormat, Asb: "dev", Agent: opts.Agent, AgentVersion: agentVersion}
	if opts.Record != nil {
		rec.Asb, rec.Workspace = opts.Record.Asb, opts.Record.Workspace
	}
	answers := opts
	answers.Workspace, answers.Record = "", nil
	rec.Answers = answers
	return rec
}

// BasePath is where the base of the outer folder's file rel is kept.
func BasePath(rel string) string { return path.Join(schema.BaseDir, rel) }
