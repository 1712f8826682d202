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
		Workspace WorkspaceOrigin `yaml:"workspace"`
	}
	if yaml.Unmarshal(data, &rec) != nil || rec.Workspace.URL == "" {
		return
	}
	for _, err := range []error{CheckRecordedOrigin(rec.Workspace.URL), CheckRecordedBranch(rec.Workspace.Branch)} {
		var oe *OriginError
		if errors.As(err, &oe) {
			c.add(Problem{File: RecordFile, Severity: SeverityError, Field: oe.Field,
				Msg: oe.Field + " " + oe.Why, Fix: oe.Fix})
		}
	}
}
