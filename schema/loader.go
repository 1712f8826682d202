package schema

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The loaders read sandbox.yaml and secrets.yaml as msb 0.7.2 does, but walk
// the yaml.Node tree themselves so that every problem carries the file, line,
// column and field path. msb is strict and so are they: unknown keys, YAML
// anchors, aliases, merge keys and tags, several documents, duplicate keys,
// and YAML 1.1 booleans (yes/no/on/off) are all rejected. Each check below
// was compared with what the real msb says (see TestRealMsbAgrees*).

// LoadSandbox reads sandbox.yaml (file names it in the problems). It returns
// the decoded config (nil when the file is not a YAML mapping), the root
// mapping node (for positions), and every problem found.
func LoadSandbox(file string, data []byte) (*Sandbox, *yaml.Node, []Problem) {
	l := newLoader(file)
	sb, root := l.sandbox(data)
	return sb, root, l.probs
}

// LoadSecrets reads secrets.yaml: a mapping of secret name to binding.
func LoadSecrets(file string, data []byte) (Secrets, *yaml.Node, []Problem) {
	l := newLoader(file)
	s, root := l.secrets(data)
	return s, root, l.probs
}

// loader collects problems and remembers the node of every field path it
// decoded, so the checks in check.go can point at a line.
type loader struct {
	file  string
	probs []Problem
	at    map[string]*yaml.Node
	lines int // of the file, once parsed: positions are clamped to it
	// mountIndex[i] is the index in the file's mounts list of Sandbox.Mounts[i]
	// (entries with problems are left out of Sandbox.Mounts).
	mountIndex []int
	// msb is the version of the msb installed here ("" unknown), which the
	// message for a key a newer msb reads names.
	msb string
}

func newLoader(file string) *loader {
	return &loader{file: file, at: map[string]*yaml.Node{}}
}

func (l *loader) add(n *yaml.Node, sev Severity, field, fix, format string, args ...any) {
	p := Problem{File: l.file, Severity: sev, Field: field, Msg: fmt.Sprintf(format, args...), Fix: fix}
	if n != nil {
		p.Line, p.Col = n.Line, n.Column
	}
	if l.lines > 0 && p.Line > l.lines {
		// yaml.v3 puts an implicit null after the last line.
		p.Line, p.Col = l.lines, 0
	}
	l.probs = append(l.probs, p)
}

func (l *loader) errf(n *yaml.Node, field, fix, format string, args ...any) {
	l.add(n, SeverityError, field, fix, format, args...)
}

var (
	yamlLineRe   = lazyRegexp(`line (\d+)(?:, column (\d+))?:? ?`)
	yamlAnchorRe = lazyRegexp(`unknown anchor '([^']*)' referenced`)
)

// parse reads exactly one YAML document and rejects the YAML features msb
// refuses. It returns the document's top node, nil when there is nothing
// usable (the problems say why).
func (l *loader) parse(data []byte) *yaml.Node {
	l.lines = countLines(data)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			l.probs = append(l.probs, Problem{File: l.file, Line: 1, Col: 1, Severity: SeverityError,
				Msg: "the file is empty; msb needs a YAML mapping", Fix: "write at least `image: NAME`, or run asb init again"})
			return nil
		}
		l.syntaxError(data, err)
		return nil
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case err == nil:
		l.errf(&next, "", "keep one document: remove the `---` line and what follows, or merge it into the first",
			"the file holds several YAML documents; msb reads only single-document files")
	case !errors.Is(err, io.EOF):
		l.syntaxError(data, err)
		l.errf(nil, "", "keep one document: remove the `---` line and what follows", "the file holds several YAML documents; msb reads only single-document files")
		if last := &l.probs[len(l.probs)-1]; last.Line == 0 {
			last.Line, last.Col = secondDocLine(data), 1
		}
	}
	if len(doc.Content) == 0 {
		return nil
	}
	top := doc.Content[0]
	l.rejectFeatures(top)
	return top
}

func secondDocLine(data []byte) int {
	for i, line := range strings.Split(string(data), "\n") {
		if i > 0 && strings.HasPrefix(line, "---") {
			return i + 1
		}
	}
	return 1
}

func (l *loader) syntaxError(data []byte, err error) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	p := Problem{File: l.file, Severity: SeverityError, Msg: "YAML syntax error: " + yamlLineRe().ReplaceAllString(msg, ""),
		Fix: "fix the YAML at that line (indent with spaces, quote values holding `: ` or `#`)"}
	p.Msg = strings.TrimRight(strings.ReplaceAll(p.Msg, ":  ", ": "), ": ")
	if m := yamlLineRe().FindStringSubmatch(msg); m != nil {
		p.Line, _ = strconv.Atoi(m[1])
		if m[2] != "" {
			p.Col, _ = strconv.Atoi(m[2])
		}
	} else if m := yamlAnchorRe().FindStringSubmatch(msg); m != nil {
		// An alias with no anchor: point at the alias.
		p.Line = 1
		for i, line := range strings.Split(string(data), "\n") {
			if j := strings.Index(line, "*"+m[1]); j >= 0 {
				p.Line, p.Col = i+1, j+1
				break
			}
		}
		p.Msg = fmt.Sprintf("YAML alias *%s: msb does not support anchors and aliases (and this one has no anchor)", m[1])
		p.Fix = "write the value out in full"
	} else {
		p.Line = 1
		if strings.Contains(msg, "cannot start any token") {
			// Most often a tab in the indentation.
			for i, line := range strings.Split(string(data), "\n") {
				if j := strings.IndexByte(line, '\t'); j >= 0 && strings.TrimLeft(line[:j], " ") == "" {
					p.Line, p.Col = i+1, j+1
					p.Fix = "indent with spaces: YAML does not allow tabs in indentation"
					break
				}
			}
		}
	}
	if p.Col == 0 && strings.Contains(msg, "cannot start any token") {
		lines := strings.Split(string(data), "\n")
		if p.Line <= len(lines) {
			if j := strings.IndexByte(lines[p.Line-1], '\t'); j >= 0 {
				p.Col = j + 1
				p.Fix = "indent with spaces: YAML does not allow tabs in indentation"
			}
		}
	}
	if n := countLines(data); p.Line > n {
		p.Line, p.Col = n, 0
	}
	l.probs = append(l.probs, p)
}

// rejectFeatures walks the tree for anchors, aliases, merge keys and tags.
func (l *loader) rejectFeatures(n *yaml.Node) {
	if n == nil {
		return
	}
	if n.Anchor != "" {
		l.errf(n, "", "write the value out in full at each place it is needed",
			"YAML anchor &%s: msb does not support anchors and aliases", n.Anchor)
	}
	if n.Kind == yaml.AliasNode {
		l.errf(n, "", "write the value out in full instead of *"+n.Value, "YAML alias *%s: msb does not support anchors and aliases", n.Value)
		return
	}
	if n.Style&yaml.TaggedStyle != 0 && n.Tag != "!!str" && n.Tag != "tag:yaml.org,2002:str" {
		l.errf(n, "", "remove the tag; write the plain value", "YAML tag %s: msb does not accept tagged values", n.Tag)
	}
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
				l.errf(k, "", "write the keys out in full", "YAML merge key <<: msb does not support merge keys")
			}
		}
	}
	for _, c := range n.Content {
		l.rejectFeatures(c)
	}
}

func countLines(data []byte) int {
	n := 1
	s := strings.ReplaceAll(string(data), "\r\n", "\n")
	for _, r := range s {
		switch r {
		case '\n', '\r', '\u0085', '\u2028', '\u2029':
			n++
		}
	}
	return n
}
