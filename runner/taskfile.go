package runner

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/agents-sandbox/asb/schema"
	"github.com/go-task/task/v3/taskfile/ast"
	"go.yaml.in/yaml/v3"
)

// TaskfileName is the outer folder's Taskfile.
const TaskfileName = "Taskfile.yml"

// Taskfile is the outer folder's Taskfile as go-task's own parser reads it
// (taskfile/ast, which links none of go-task's executor). asb reads it for
// what it needs before the engine runs: the AGENT var and the task names.
type Taskfile struct {
	ast *ast.Taskfile
}

// ReadTaskfile parses dir/Taskfile.yml.
func ReadTaskfile(dir string) (*Taskfile, error) {
	raw, err := readTaskfileRaw(dir)
	if err != nil {
		return nil, err
	}
	return parseTaskfile(raw)
}

// readTaskfileRaw reads dir/Taskfile.yml's bytes.
func readTaskfileRaw(dir string) ([]byte, error) {
	raw, err := schema.ReadFile(filepath.Join(dir, TaskfileName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no %s in %s: run asb task inside an outer folder made by asb init (or pass --dir)", TaskfileName, dir)
	}
	return raw, err
}

// parseTaskfile parses a Taskfile's bytes with go-task's parser.
func parseTaskfile(raw []byte) (*Taskfile, error) {
	var tf ast.Taskfile
	if err := yaml.Unmarshal(raw, &tf); err != nil {
		return nil, fmt.Errorf("read %s: %w", TaskfileName, err)
	}
	return &Taskfile{ast: &tf}, nil
}

// StaticVar returns the literal value of a top-level var, "" when it is
// unset or computed (sh:, a template).
func (t *Taskfile) StaticVar(name string) string {
	if t.ast.Vars == nil {
		return ""
	}
	v, ok := t.ast.Vars.Get(name)
	if !ok || v.Sh != nil {
		return ""
	}
	s, _ := v.Value.(string)
	if strings.Contains(s, "{{") {
		return ""
	}
	return s
}

// Names lists the tasks of the Taskfile itself, in file order (included
// Taskfiles are the engine's to read).
func (t *Taskfile) Names() []string {
	if t.ast.Tasks == nil {
		return nil
	}
	var names []string
	for name := range t.ast.Tasks.Keys(nil) {
		names = append(names, name)
	}
	return names
}

// UnknownTaskError names a task the Taskfile does not have.
type UnknownTaskError struct {
	Name  string
	Known []string
}

func (e *UnknownTaskError) Error() string {
	return fmt.Sprintf("no task %q in Taskfile.yml; the tasks are: %s (asb task --list describes them)",
		e.Name, strings.Join(e.Known, ", "))
}

// Check returns an UnknownTaskError for the first name the Taskfile lacks;
// with included Taskfiles it checks nothing (their tasks are the engine's
// to know).
func (t *Taskfile) Check(names ...string) error {
	return t.Facts().Check(names...)
}

// TaskFailedError is a task whose command failed; Code is its exit code.
type TaskFailedError struct {
	Task     string
	Code     int
	Err      error
	NeededBy []string // the tasks that depended on it, outermost first
}

func (e *TaskFailedError) Error() string {
	msg := fmt.Sprintf("task %s failed: %v", e.Task, e.Err)
	if len(e.NeededBy) > 0 {
		msg += fmt.Sprintf(" (needed by %s)", strings.Join(e.NeededBy, " → "))
	}
	return msg
}

func (e *TaskFailedError) Unwrap() error { return e.Err }

// ExitCode is the failed command's exit code, which asb exits with.
func (e *TaskFailedError) ExitCode() int { return e.Code }

// Include is one entry of a Taskfile's includes: the Taskfile (or folder)
// it names, as written, and whether go-task skips it when it is missing.
type Include struct {
	Namespace string
	Taskfile  string
	Optional  bool
}

// mayTagBinary reports whether a YAML document can tag a node binary:
// the tag is tag:yaml.org,2002:binary, which only !!, !<…> or a %TAG
// directive can spell.
func mayTagBinary(raw []byte) bool {
	return bytes.Contains(raw, []byte("!!")) || bytes.Contains(raw, []byte("!<")) || bytes.Contains(raw, []byte("%TAG"))
}

// ParseIncludes returns the includes of a Taskfile's content, read by
// go-task's own parser.
func ParseIncludes(raw []byte) ([]Include, error) {
	// A document in which no key can spell "includes" has none, and the
	// warm path need not parse it whole: the word appears literally in any
	// plain, single-quoted or block key; a double-quoted key can spell it
	// only with a backslash escape; UTF-16 and UTF-32 (which the YAML
	// parser decodes) hold NUL bytes; and a key tagged binary holds base64
	// (`!!binary aW5jbHVkZXM=` is includes to the parser), a tag that only
	// a secondary handle (!!), a verbatim tag (!<…>) or a %TAG directive
	// can name, its letters %-escaped or split across prefix and suffix.
	if !bytes.Contains(raw, []byte("includes")) && !bytes.ContainsAny(raw, "\\\x00") && !mayTagBinary(raw) {
		return nil, nil
	}
	var tf struct {
		Includes *ast.Includes `yaml:"includes"`
	}
	if err := yaml.Unmarshal(raw, &tf); err != nil {
		return nil, err
	}
	if tf.Includes == nil {
		return nil, nil
	}
	var out []Include
	for ns, inc := range tf.Includes.All() {
		out = append(out, Include{Namespace: ns, Taskfile: inc.Taskfile, Optional: inc.Optional})
	}
	return out, nil
}
