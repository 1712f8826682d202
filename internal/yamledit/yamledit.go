// Package yamledit edits a YAML document in place, the way a careful person
// would with an editor: the document is parsed into a yaml.Node tree (never a
// struct), changed node by node, and encoded again. The user's comments (above,
// beside and below keys), the order of keys, the quoting style of scalars, the
// indentation and the blank lines between sections survive; lines the edit did
// not touch come back byte for byte.
//
// go.yaml.in/yaml/v3 keeps comments and styles on its nodes but drops blank
// lines, re-spaces inline comments and re-indents foot comments. Bytes puts
// those back by matching the encoded lines against the original ones, and
// keeps the plain encoding whenever that repair would change the meaning.
package yamledit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"

	"go.yaml.in/yaml/v3"
)

// Doc is one parsed YAML document.
type Doc struct {
	doc    *yaml.Node // the DocumentNode
	orig   []byte
	indent int
	// empty: the original held no value (only comments or nothing); it is
	// kept verbatim and the new content is written after it.
	empty bool
}

// Parse reads data, which must hold at most one YAML document.
func Parse(data []byte) (*Doc, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var n yaml.Node
	err := dec.Decode(&n)
	d := &Doc{orig: data, indent: detectIndent(data)}
	switch {
	case errors.Is(err, io.EOF):
		d.empty = true
	case err != nil:
		return nil, err
	default:
		var extra yaml.Node
		if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
			if err != nil {
				return nil, err
			}
			return nil, errors.New("the file holds more than one YAML document (a second ---); keep only one")
		}
	}
	if d.empty || n.Kind != yaml.DocumentNode || len(n.Content) == 0 {
		d.empty = true
		n = yaml.Node{Kind: yaml.DocumentNode}
	}
	d.doc = &n
	return d, nil
}

// Root returns the top-level mapping, creating it in an empty document. It
// returns an error when the document's top level is not a mapping.
func (d *Doc) Root() (*yaml.Node, error) {
	if len(d.doc.Content) == 0 {
		d.doc.Content = []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}
	}
	root := d.doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		*root = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", HeadComment: root.HeadComment, FootComment: root.FootComment}
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("the top level is not a mapping of keys (line %d)", root.Line)
	}
	if root.Style&yaml.FlowStyle != 0 && len(root.Content) == 0 {
		root.Style &^= yaml.FlowStyle // `{}` grows into a block mapping
	}
	return root, nil
}

// Bytes encodes the document, restoring the original layout where the edit
// did not change it.
func (d *Doc) Bytes() ([]byte, error) {
	if d.empty && len(d.doc.Content) == 0 {
		return d.orig, nil
	}
	plain, err := encode(d.doc, d.indent)
	if err != nil {
		return nil, err
	}
	plain = blankSentinels(plain)
	if d.empty {
		// Keep the comments of a document that had no value, then the value.
		head := bytes.TrimRight(d.orig, " \t\n")
		if len(head) == 0 {
			return plain, nil
		}
		return slices.Concat(head, []byte("\n\n"), plain), nil
	}
	for _, loose := range []bool{true, false} {
		if restored := restoreLayout(d.orig, plain, loose); sameDocument(restored, plain, d.indent) {
			return restored, nil
		}
	}
	return plain, nil
}

func encode(n *yaml.Node, indent int) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(indent)
	if err := enc.Encode(n); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// sameDocument reports whether a and b hold the same values and comments.
func sameDocument(a, b []byte, indent int) bool {
	norm := func(src []byte) ([]byte, bool) {
		var n yaml.Node
		if err := yaml.Unmarshal(src, &n); err != nil {
			return nil, false
		}
		out, err := encode(&n, indent)
		return out, err == nil
	}
	na, ok1 := norm(a)
	nb, ok2 := norm(b)
	return ok1 && ok2 && bytes.Equal(na, nb)
}

// detectIndent returns the indentation step of data: how much deeper than
// its parent a nested block starts, 2 when the file has no nested block.
func detectIndent(data []byte) int {
	best := 0
	prevIndent, prevOpens := 0, false
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		t := bytes.TrimLeft(line, " ")
		if len(bytes.TrimSpace(t)) == 0 || t[0] == '#' {
			continue
		}
		ind := len(line) - len(t)
		if prevOpens && ind > prevIndent && (best == 0 || ind-prevIndent < best) {
			best = ind - prevIndent
		}
		body := bytes.TrimSpace(stripComment(string(t)))
		prevIndent, prevOpens = ind, bytes.HasSuffix(body, []byte(":"))
		if bytes.HasPrefix(t, []byte("- ")) {
			prevIndent += 2 // keys of a mapping in a list item line up after "- "
		}
	}
	if best < 2 || best > 8 {
		return 2
	}
	return best
}
