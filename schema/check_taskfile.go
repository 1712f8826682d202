package schema

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	taskerrors "github.com/go-task/task/v3/errors"

	"github.com/go-task/task/v3/taskfile/ast"
	"go.yaml.in/yaml/v3"
)

func (c *checker) checkTaskfile() {
	data, ok, err := c.read(TaskfileFile)
	if err != nil {
		c.add(Problem{File: TaskfileFile, Severity: SeverityError, Msg: "cannot read the file: " + errText(err), Fix: "make it readable"})
		return
	}
	if !ok {
		c.add(Problem{File: TaskfileFile, Severity: SeverityWarning, Msg: "the outer folder has no Taskfile.yml: asb task has nothing to run",
			Fix: "run asb init --agent AGENT again to restore it"})
		return
	}
	c.probs = append(c.probs, CheckTaskfile(TaskfileFile, data)...)
	c.checkTaskLimits(data)
}

// checkTaskLimits applies the limits' rule to the Taskfile's vars that
// hold one (ROOT_DISK, CONTAINER_DISK): msb create reads them as flags.
func (c *checker) checkTaskLimits(data []byte) {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return
	}
	vars := mapValue(doc.Content[0], "vars")
	for _, l := range Limits {
		if l.Where != InTaskfile {
			continue
		}
		v := mapValue(vars, l.Key)
		if v == nil || v.Kind != yaml.ScalarNode {
			continue
		}
		if re := Limit(l.Name, v.Value); re != nil {
			c.at(TaskfileFile, v, SeverityError, "vars."+l.Key, re.Fix+" (or asb limit set "+l.Name+" SIZE)", "%s %q %s", l.Key, v.Value, re.Why)
		}
	}
}

// CheckTaskfile reads a Taskfile the way go-task v3 does (yaml into
// ast.Taskfile) and reports its error with the line.
func CheckTaskfile(file string, data []byte) []Problem {
	var tf ast.Taskfile
	err := yaml.Unmarshal(data, &tf)
	if err == nil {
		if tf.Version == nil {
			return []Problem{{File: file, Line: 1, Col: 1, Severity: SeverityError, Field: "version",
				Msg: "Taskfile.yml has no version; go-task refuses it", Fix: "add version: '3' at the top"}}
		}
		if tf.Version.Major() != 3 {
			return []Problem{{File: file, Line: 1, Col: 1, Severity: SeverityError, Field: "version",
				Msg: fmt.Sprintf("Taskfile.yml has version %s; asb's go-task reads version 3", tf.Version), Fix: "use version: '3'"}}
		}
		return nil
	}
	p := Problem{File: file, Severity: SeverityError, Fix: "fix Taskfile.yml at that line (see taskfile.dev/reference/schema)"}
	var de *taskerrors.TaskfileDecodeError
	if errors.As(err, &de) {
		p.Line, p.Col = de.Line, de.Column
		p.Msg = "go-task cannot read it: " + decodeMessage(de)
	} else {
		lp := newLoader(file)
		lp.syntaxError(data, err)
		p = lp.probs[0]
		p.Msg = "go-task cannot read it: " + p.Msg
	}
	if p.Line <= 0 {
		p.Line = 1
	}
	return []Problem{p}
}

func decodeMessage(de *taskerrors.TaskfileDecodeError) string {
	if de.Message != "" {
		return de.Message
	}
	var te *yaml.TypeError
	if errors.As(de.Err, &te) && len(te.Errors) > 0 {
		msgs := slices.Clone(te.Errors)
		for i, m := range msgs {
			msgs[i] = yamlLineRe().ReplaceAllString(strings.TrimPrefix(m, "yaml: "), "")
			msgs[i] = strings.Trim(msgs[i], ": ")
		}
		return strings.Join(msgs, "; ")
	}
	if de.Err != nil {
		return strings.TrimPrefix(de.Err.Error(), "yaml: ")
	}
	return "invalid Taskfile"
}
