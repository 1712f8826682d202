package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"mvdan.cc/sh/v3/syntax"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/cmd/asb/internal/root"
)

// Every shell block of README.md and of the docs/ quick starts keeps
// working (issue 38). Each block is read as sh reads it; each `asb …` in it
// must name a command and flags asb has and the number of arguments it
// takes, and each `make X` a target of the Makefile. A block the stand-ins
// can run (docBlocks says how: the setup before it, what a command is
// expected to do when it is not simply to succeed, the checks after it)
// then runs: each command becomes a line of a testscript, in order, with
// the stand-in msb, docker and podman on PATH. A block that needs what no
// stand-in gives (a real VM, a cluster, a registry) is only read, and its
// spec says why.

// docQuickStarts are the pages whose shell blocks are tested: README.md and
// the docs/ pages a newcomer follows. Every docs/ page the README links is
// either here or in docNotQuickStarts (TestDocBlocksCoverTheMap).
var docQuickStarts = []string{"README.md", "docs/install.md", "docs/team.md", "docs/sessions.md",
	"docs/network.md", "docs/secrets.md", "docs/serve.md", "docs/disk.md", "docs/kubernetes.md",
	"docs/limits.md", "docs/security.md", "docs/trust.md", "docs/tasks.md", "docs/doctor.md",
	"docs/msb-releases.md"}

// docNotQuickStarts are pages the README links whose blocks are not a
// newcomer's steps: developers' notes, and the generated transcript (which
// a test writes from what it ran: TestFirstRunTranscript).
var docNotQuickStarts = []string{"docs/first-run.md", "docs/agents.md", "docs/image.md", "docs/development.md",
	"docs/boot.md", "docs/ARCHITECTURE.md", "docs/startup.md", "docs/testing.md", "docs/vm-repositories.md"}

// docBlock is a shell block of a page.
type docBlock struct {
	file  string
	line  int // of the opening fence
	text  string
	first string // its first line, which names it in docBlocks
}

var fenceRe = regexp.MustCompile("^```(sh|bash|shell)\\s*$")

// readDocBlocks returns the shell blocks of file (relative to the repository).
func readDocBlocks(t *testing.T, file string) []docBlock {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []docBlock
	var cur *docBlock
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		switch {
		case cur == nil && fenceRe.MatchString(l):
			cur = &docBlock{file: file, line: n}
		case cur != nil && strings.TrimSpace(l) == "```":
			cur.first = strings.SplitN(cur.text, "\n", 2)[0]
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.text += l + "\n"
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDocBlocks reads and checks every block, and runs those docBlocks
// says the stand-ins can run.
func TestDocBlocks(t *testing.T) {
	script := t.TempDir()
	used := map[string]bool{}
	for _, file := range docQuickStarts {
		for _, b := range readDocBlocks(t, file) {
			key := b.file + ": " + b.first
			spec, ok := docBlocks[key]
			if !ok {
				t.Errorf("%s:%d: a shell block with no entry in docBlocks (docblocks_specs_test.go): add %q with how the stand-ins run it, or why they cannot", b.file, b.line, key)
				continue
			}
			used[key] = true
			if spec.synopsis {
				continue
			}
			calls := parseBlock(t, b)
			for _, c := range calls {
				checkCall(t, b, c)
			}
			if spec.why != "" {
				continue // read and checked only
			}
			name := fmt.Sprintf("%s-%d", strings.NewReplacer("/", "-", ".", "-").Replace(b.file), b.line)
			txt := "# " + b.file + ":" + fmt.Sprint(b.line) + "\n" + docPreamble + spec.setup + "\n" + blockScript(t, b, spec, calls) + spec.check + "\n" + docEditor + spec.files
			if err := os.WriteFile(filepath.Join(script, name+".txtar"), []byte(txt), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for key := range docBlocks {
		if !used[key] {
			t.Errorf("docBlocks has %q, which no quick start holds any more: remove or rename it", key)
		}
	}
	if t.Failed() {
		return
	}
	testscript.Run(t, Params(script))
}

// docPreamble is every run block's start: the stand-ins on PATH, a host
// that can boot, an editor that fills in the agent's key.
const docPreamble = `env ASB_TEST_HOST_SHAPE=can-boot
env ASB_FAKE_STATE=$WORK/fakestate
fakes $WORK/fakebin
env PATH=$WORK/fakebin${:}$PATH
env EDITOR=$WORK/editor
cp $WORK/editor.sh $WORK/editor
chmod 755 $WORK/editor
`

// docEditor is $EDITOR: it fills in every value secrets.env leaves
// commented out, as the user would.
const docEditor = `-- editor.sh --
#!/bin/sh
sed -i 's/^# *\([A-Z][A-Z0-9_]*\)=$/\1=doc-value/' "$1"
`

// call is one simple command of a block: its words as written, and where.
type call struct {
	words []*syntax.Word
	line  uint
	text  string // as the block writes it
}

// parseBlock reads b as bash would and returns its simple commands; a
// block sh cannot read fails.
func parseBlock(t *testing.T, b docBlock) []call {
	t.Helper()
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(b.text), b.file)
	if err != nil {
		t.Errorf("%s:%d: the block is not shell sh can read: %v", b.file, b.line, err)
		return nil
	}
	lines := strings.Split(b.text, "\n")
	var out []call
	syntax.Walk(f, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.CallExpr); ok && len(c.Args) > 0 {
			out = append(out, call{words: c.Args, line: c.Pos().Line(), text: source(lines, c)})
		}
		return true
	})
	return out
}

// source is the text of c in the block's lines.
func source(lines []string, c *syntax.CallExpr) string {
	from, to := c.Pos(), c.End()
	if from.Line() == to.Line() {
		return lines[from.Line()-1][from.Col()-1 : to.Col()-1]
	}
	parts := []string{lines[from.Line()-1][from.Col()-1:]}
	for l := from.Line() + 1; l < to.Line(); l++ {
		parts = append(parts, lines[l-1])
	}
	return strings.Join(append(parts, lines[to.Line()-1][:to.Col()-1]), "\n")
}

// literal is w as the shell would see it when it holds no expansion but a
// variable and a leading ~/ (ok false otherwise); vars are kept as $NAME.
func literal(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for i, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			v := p.Value
			if i == 0 && strings.HasPrefix(v, "~/") {
				v = "$HOME/" + v[2:]
			}
			b.WriteString(v)
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(l.Value)
			}
		case *syntax.ParamExp:
			if p.Excl || p.Length || p.Width || p.Exp != nil || p.Index != nil || p.Slice != nil || p.Repl != nil {
				return "", false
			}
			b.WriteString("$" + p.Param.Value)
		default:
			return "", false
		}
	}
	return b.String(), true
}

// checkCall checks an asb command against asb's command tree, and a make
// target against the Makefile.
func checkCall(t *testing.T, b docBlock, c call) {
	t.Helper()
	var args []string
	for _, w := range c.words {
		s, ok := literal(w)
		if !ok {
			return // built at run time: not judged here
		}
		args = append(args, s)
	}
	where := fmt.Sprintf("%s:%d: %s", b.file, b.line+int(c.line), c.text)
	switch args[0] {
	case "asb":
		if err := asbParses(args[1:]); err != nil {
			t.Errorf("%s: asb would refuse it: %v", where, err)
		}
	case "make":
		for _, target := range args[1:] {
			if !makeTargets(t)[target] {
				t.Errorf("%s: the Makefile has no target %s", where, target)
			}
		}
	}
}

// asbParses resolves args to a command of asb's tree and parses its flags
// and arguments as cobra would before running it; nothing runs.
func asbParses(args []string) error {
	rootCmd := root.NewCmd(root.NewFactory(cmdutil.System()))
	rootCmd.InitDefaultHelpCmd()
	rootCmd.InitDefaultCompletionCmd()
	c, rest, err := rootCmd.Find(args)
	if err != nil {
		return err
	}
	if c == rootCmd {
		return fmt.Errorf("no command %q", strings.Join(args, " "))
	}
	if err := c.ParseFlags(rest); err != nil {
		return err
	}
	return c.ValidateArgs(c.Flags().Args())
}

var makeTargetRe = regexp.MustCompile(`^([A-Za-z0-9_.-]+):`)

func makeTargets(t *testing.T) map[string]bool {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for l := range strings.SplitSeq(string(raw), "\n") {
		if m := makeTargetRe.FindStringSubmatch(l); m != nil {
			out[m[1]] = true
		}
	}
	return out
}

// blockScript turns the block's commands into testscript lines, in order:
// cd as testscript's cd, every other command as exec, or what the spec
// expects of it instead.
func blockScript(t *testing.T, b docBlock, spec docSpec, calls []call) string {
	t.Helper()
	var s strings.Builder
	for _, c := range calls {
		if want, ok := spec.expect[c.text]; ok {
			s.WriteString(want + "\n")
			continue
		}
		var words []string
		for _, w := range c.words {
			lit, ok := literal(w)
			if !ok {
				t.Errorf("%s:%d: %q holds an expansion the runner cannot carry: give its line an expect entry, or make the block read-only (why)", b.file, b.line, c.text)
				return ""
			}
			words = append(words, tsQuote(lit))
		}
		if words[0] == "cd" {
			s.WriteString("cd " + strings.Join(words[1:], " ") + "\n")
			continue
		}
		s.WriteString("exec " + strings.Join(words, " ") + "\n")
	}
	return s.String()
}

// tsQuote quotes s for a testscript line: single quotes around what holds a
// space or a quote, with $NAME left outside them to be expanded.
func tsQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " '\"#\t") {
		return s
	}
	var b strings.Builder
	for _, part := range splitVars(s) {
		if strings.HasPrefix(part, "$") {
			b.WriteString("${" + part[1:] + "}")
			continue
		}
		b.WriteString("'" + strings.ReplaceAll(part, "'", "''") + "'")
	}
	return b.String()
}

var varRe = regexp.MustCompile(`\$[A-Za-z_][A-Za-z0-9_]*`)

func splitVars(s string) []string {
	var out []string
	last := 0
	for _, m := range varRe.FindAllStringIndex(s, -1) {
		if m[0] > last {
			out = append(out, s[last:m[0]])
		}
		out = append(out, s[m[0]:m[1]])
		last = m[1]
	}
	if last < len(s) || len(out) == 0 {
		out = append(out, s[last:])
	}
	return out
}

// TestDocBlocksCoverTheMap: each docs/ page the README links is a quick
// start (its blocks tested) or listed as not one.
func TestDocBlocksCoverTheMap(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`\]\((docs/[A-Za-z0-9_.-]+\.md)`).FindAllStringSubmatch(string(raw), -1) {
		if !slices.Contains(docQuickStarts, m[1]) && !slices.Contains(docNotQuickStarts, m[1]) {
			t.Errorf("README.md links %s, which is neither in docQuickStarts nor in docNotQuickStarts", m[1])
		}
	}
}

// TestReadmeFirstScreen: the README's first screen (24 lines) holds the two
// commands and what to do after make demo.
func TestReadmeFirstScreen(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitN(string(raw), "\n", 25)
	screen := strings.Join(lines[:min(24, len(lines))], "\n")
	for _, want := range []string{"make demo", "make test", "cd demo", "secrets.env", "asb task agent", "docs/first-run.md"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the README's first 24 lines do not say %q", want)
		}
	}
}
