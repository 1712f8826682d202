package archtest

import (
	"iter"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// rawStreams are the product files that may name the process's own
// streams, each with why: everything else prints through the streams it
// is handed, which are asb's one printer (internal/termtext).
var rawStreams = map[string]string{
	"cmd/asb/internal/cmdutil/cmdutil.go": "System: the streams root wraps in the printer",
	"runner/engine/engine.go":             "the engine wraps them itself; the raw ones go to an interactive task only",
	"cmd/asb-export/main.go":              "asb-export's output reaches the terminal through asb's printer (asb export runs it)",
	"cmd/asb/internal/servecmd/serve.go":  "asb attach: the agent's own client, the user's chosen raw channel",
	"runner/foreground.go":                "the agent's interface on the warm path: the user's chosen raw channel",
	"cmd/asb/internal/secretcmd/from.go":  "asb secret exec: msb, run by the Taskfile (the engine's printer is around it)",
	"internal/termtext/termtext.go":       "the printer",
	"internal/proc/keeper_linux.go":       "a group's keeper hands its program the streams asb gave it (a pipe asb reads, never the terminal)",
}

var (
	rawStreamRe = regexp.MustCompile(`\bos\.(Stdout|Stderr)\b`)
	escapeRe    = regexp.MustCompile(`\\x1b|\\033|\\u001b|\\x9b|\\u009b`)
	jsonEncRe   = regexp.MustCompile(`json\.NewEncoder\(`)
)

// One printer, impossible to forget: no product file but the listed ones
// writes to the process's streams directly, none but termtext holds an
// escape sequence, and every JSON document a command prints goes through
// termtext.JSON (so a Writer keeps it valid).
func TestOnePrinter(t *testing.T) {
	for r, raw := range shippedSources(t) {
		src := string(raw)
		if _, ok := rawStreams[r]; !ok && rawStreamRe.MatchString(src) {
			t.Errorf("%s names os.Stdout or os.Stderr: print to the command's IOStreams (internal/termtext), or list it in printer_test.go with why", r)
		}
		if !strings.HasPrefix(r, "internal/termtext/") && escapeRe.MatchString(src) {
			t.Errorf("%s holds a terminal escape: asb's own styles are termtext.Style, applied by termtext.Fprint", r)
		}
		if strings.HasPrefix(r, "cmd/") {
			for _, loc := range jsonEncRe.FindAllStringIndex(src, -1) {
				if !strings.HasPrefix(src[loc[1]:], "termtext.JSON(") {
					t.Errorf("%s: json.NewEncoder(…) of a command's output must take termtext.JSON(w)", r)
				}
			}
		}
	}
}

// shippedSources yields each product file that goes into a binary (not
// make bench's own program), by its slash path from the module's root,
// with its content: what the rules on source text read.
func shippedSources(t *testing.T) iter.Seq2[string, []byte] {
	root := moduleRoot(t)
	return func(yield func(string, []byte) bool) {
		for _, p := range productFiles(t, root) {
			r, _ := filepath.Rel(root, p)
			r = filepath.ToSlash(r)
			if strings.HasPrefix(r, "internal/benchmark/") {
				continue // make bench's own program, not in any binary
			}
			raw, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if !yield(r, raw) {
				return
			}
		}
	}
}
