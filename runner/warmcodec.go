package runner

import (
	"maps"
	"slices"
	"strconv"

	"github.com/agents-sandbox/asb/internal/linerec"
)

// A warm record is read at every warm run, so it is lines
// (internal/linerec), one per fact, in the order below; a step is one
// line of its fields in WarmStep's order, its lists last:
//
//	asb-warm 5
//	dir "DIR"
//	cwd "DIR"
//	task "NAME"                 (each named task)
//	var "NAME" "VALUE"          (sorted by name)
//	silent BOOL
//	args BOOL
//	taskfile "SHA256"
//	binary "PATH" SIZE MTIME
//	source "ROOT" "SUM"
//	check "TASK" "KIND" "CMD" "LOG" "DIR" "VM" "IS_DIR" IGNORE_ERROR ENV DOTENV SET SHOPT ARGV
//	cmd   (a command, as a check)
//	session BOOL
//
// The key's lines, alone, name the record's file (warmRel).
func warmFormat() string { return "asb-warm " + strconv.Itoa(WarmVersion) }

// writeKey writes key's lines.
func writeKey(w *linerec.Writer, key WarmKey) {
	w.Line("dir", key.Dir)
	w.Line("cwd", key.Cwd)
	for _, t := range key.Tasks {
		w.Line("task", t)
	}
	for _, k := range slices.Sorted(maps.Keys(key.Vars)) {
		w.Line("var", k, key.Vars[k])
	}
	w.Line("silent", key.Silent)
	w.Line("args", key.Args)
}

// keyBytes is key as a record writes it: what names and matches it.
func keyBytes(key WarmKey) []byte {
	w := linerec.NewWriter(warmFormat())
	writeKey(w, key)
	return w.Bytes()
}

func encodeWarm(r *WarmRecord) []byte {
	w := linerec.NewWriter(warmFormat())
	writeKey(w, r.Key)
	w.Line("taskfile", r.Taskfile)
	for _, b := range r.Binaries {
		w.Line("binary", b.Path, b.Size, b.ModNs)
	}
	for _, s := range r.Sources {
		w.Line("source", s.Root, s.Sum)
	}
	for _, s := range r.Checks {
		writeStep(w, "check", s)
	}
	for _, s := range r.Cmds {
		writeStep(w, "cmd", s)
	}
	w.Line("session", r.Session)
	return w.Bytes()
}

func writeStep(w *linerec.Writer, tag string, s WarmStep) {
	w.Line(tag, s.Task, s.Kind, s.Cmd, s.Log, s.Dir, s.VM, s.IsDir, s.IgnoreError, s.Env, s.Dotenv, s.Set, s.Shopt, s.Argv)
}

// DecodeWarm reads a record of this version; false for anything else.
func DecodeWarm(raw []byte) (*WarmRecord, bool) {
	rd := linerec.NewReader(raw, warmFormat())
	if rd == nil {
		return nil, false
	}
	r := &WarmRecord{Version: WarmVersion}
	for tag, ok := rd.Next(); ok; tag, ok = rd.Next() {
		if !r.decodeLine(tag, rd) {
			rd.Fail()
		}
	}
	return r, rd.OK()
}

func (r *WarmRecord) decodeLine(tag string, rd *linerec.Reader) bool {
	k := &r.Key
	switch tag {
	case "dir":
		k.Dir = rd.Str()
	case "cwd":
		k.Cwd = rd.Str()
	case "task":
		k.Tasks = append(k.Tasks, rd.Str())
	case "var":
		if k.Vars == nil {
			k.Vars = map[string]string{}
		}
		name := rd.Str()
		k.Vars[name] = rd.Str()
	case "silent":
		k.Silent = rd.Bool()
	case "args":
		k.Args = rd.Bool()
	case "taskfile":
		r.Taskfile = rd.Str()
	case "binary":
		r.Binaries = append(r.Binaries, FileStamp{Path: rd.Str(), Size: rd.Int(), ModNs: rd.Int()})
	case "source":
		r.Sources = append(r.Sources, TreeStamp{Root: rd.Str(), Sum: rd.Str()})
	case "check":
		r.Checks = append(r.Checks, readStep(rd))
	case "cmd":
		r.Cmds = append(r.Cmds, readStep(rd))
	case "session":
		r.Session = rd.Bool()
	default:
		return false
	}
	return true
}

func readStep(rd *linerec.Reader) WarmStep {
	return WarmStep{Task: rd.Str(), Kind: rd.Str(), Cmd: rd.Str(), Log: rd.Str(), Dir: rd.Str(), VM: rd.Str(),
		IsDir: rd.Str(), IgnoreError: rd.Bool(), Env: rd.List(), Dotenv: rd.List(), Set: rd.List(), Shopt: rd.List(),
		Argv: rd.List()}
}
