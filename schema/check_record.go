package schema

import (
	"errors"

	"go.yaml.in/yaml/v3"
)

// checkRecord judges asb.yaml's workspace origin as asb sync does before
// it clones (CheckRecordedOrigin): validate says so before sync refuses.
func (c *checker) checkRecord() {
	data, ok, err := c.read(RecordFile)
	if err != nil || !ok {
		return // no record (an older folder): nothing to clone from
	}
	var rec struct {
		Agent     string          `yaml:"agent"`
		Workspace WorkspaceOrigin `yaml:"workspace"`
	}
	if yaml.Unmarshal(data, &rec) != nil {
		return
	}
	if note := rec.Workspace.LocalNote(); note != "" && rec.Workspace.URL == "" {
		c.add(Problem{File: RecordFile, Severity: SeverityNote, Field: "workspace.local",
			Msg: "workspace is " + note + "; it works for its author, and a teammate's asb sync leaves workspace/ empty",
			Fix: LocalShareFix(rec.Agent)})
		return
	}
	if rec.Workspace.URL == "" {
		return
	}
	for _, err := range []error{CheckRecordedOrigin(rec.Workspace.URL), CheckRecordedBranch(rec.Workspace.Branch)} {
		var oe *OriginError
		if !errors.As(err, &oe) {
			continue
		}
		sev := SeverityError
		if kind, terr := CheckTypedOrigin(rec.Workspace.URL); terr == nil && kind == OriginLocal && oe.Field == OriginField {
			// What an older asb recorded for --workspace PATH: only a
			// teammate's sync refuses it (it clones nothing from a record
			// but a remote); it stops nothing here.
			sev = SeverityWarning
		}
		c.add(Problem{File: RecordFile, Severity: sev, Field: oe.Field, Msg: oe.Field + " " + oe.Why, Fix: oe.Fix})
	}
}

// LocalShareFix is how the author of a local workspace of an outer folder
// for agent shares it.
func LocalShareFix(agent string) string {
	if agent == "" {
		agent = "AGENT"
	}
	return "to share it, give workspace/ a remote teammates can clone (git -C workspace remote add origin URL; git -C workspace push -u origin HEAD), then run asb init --agent " + agent + " again in the outer folder to record it"
}
