package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"slices"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/folderfs"
	"github.com/agents-sandbox/asb/schema"
)

// What `asb task` needs of the Taskfile before it runs anything is three
// facts: its AGENT var (this clone's names, and so the warm record's key),
// its tasks' names (a misspelt task is refused before anything runs) and
// whether it includes other Taskfiles. Parsing the Taskfile with go-task's
// parser for them was the largest part of a warm run's own work (~1.7 ms
// of a 9.5 KB document on the slow machine), for a file the warm record
// proves unchanged by its sha256. So the facts are recorded beside the warm
// records, with the sha256 of the bytes they were read from: a Taskfile of
// those very bytes gives the same facts without a parse; any other (edited,
// replaced, a record of another version or one a clone carried) is parsed
// as before.

// TaskfileFactsPath records the facts of this clone's Taskfile (under
// .asb/, git-ignored; not in WarmDir, whose records are pruned by count).
const TaskfileFactsPath = ".asb/taskfile.json"

// TaskfileFactsVersion is the format of TaskfileFactsPath; a record of
// another version is parsed afresh.
const TaskfileFactsVersion = 1

// TaskfileFacts is what asb reads from the Taskfile before a run.
type TaskfileFacts struct {
	Version  int      `json:"version"`
	Sum      string   `json:"taskfile_sha256"` // of the bytes they were read from
	Agent    string   `json:"agent"`           // the AGENT var (StaticVar)
	Names    []string `json:"names"`           // the tasks, in file order
	Includes bool     `json:"includes"`        // it includes other Taskfiles
}

// Facts returns t's facts (Sum is the caller's to set).
func (t *Taskfile) Facts() TaskfileFacts {
	return TaskfileFacts{Version: TaskfileFactsVersion, Agent: t.StaticVar("AGENT"), Names: t.Names(),
		Includes: t.ast.Includes != nil && t.ast.Includes.Len() > 0}
}

// Check returns an UnknownTaskError for the first name the Taskfile lacks;
// with included Taskfiles it checks nothing (their tasks are the engine's
// to know).
func (f TaskfileFacts) Check(names ...string) error {
	if f.Includes {
		return nil
	}
	for _, n := range names {
		if !slices.Contains(f.Names, n) {
			return &UnknownTaskError{Name: n, Known: slices.Sorted(slices.Values(f.Names))}
		}
	}
	return nil
}

// ReadTaskfileFacts returns the facts of dir's Taskfile: from
// TaskfileFactsPath when it holds them for the Taskfile's current bytes,
// else parsed (ReadTaskfile's errors), and, with save, recorded for the
// next run.
func ReadTaskfileFacts(dir string, save bool) (TaskfileFacts, error) {
	raw, err := readTaskfileRaw(dir)
	if err != nil {
		return TaskfileFacts{}, err
	}
	sum := sha256.Sum256(raw)
	hexSum := hex.EncodeToString(sum[:])
	if f, ok := loadTaskfileFacts(dir, hexSum); ok {
		return f, nil
	}
	tf, err := parseTaskfile(raw)
	if err != nil {
		return TaskfileFacts{}, err
	}
	f := tf.Facts()
	f.Sum = hexSum
	if save {
		if b, err := json.MarshalIndent(f, "", "  "); err == nil {
			_ = generator.WriteFileAtomic(dir, TaskfileFactsPath, b, 0o600) // a cache: the next run parses again
		}
	}
	return f, nil
}

// loadTaskfileFacts returns the recorded facts when they are of this
// version and of the Taskfile whose sha256 is sum.
func loadTaskfileFacts(dir, sum string) (TaskfileFacts, bool) {
	if folderfs.Local(dir, TaskfileFactsPath) != nil {
		return TaskfileFacts{}, false // one a clone carried: never believed
	}
	raw, err := schema.ReadFile(filepath.Join(dir, filepath.FromSlash(TaskfileFactsPath)))
	if err != nil {
		return TaskfileFacts{}, false
	}
	var f TaskfileFacts
	if json.Unmarshal(raw, &f) != nil || f.Version != TaskfileFactsVersion || f.Sum != sum {
		return TaskfileFacts{}, false
	}
	return f, true
}
