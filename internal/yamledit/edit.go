package yamledit

import (
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Get returns the value of key in mapping m, or nil when m is not a
// mapping or has no such key.
func Get(m *yaml.Node, key string) *yaml.Node {
	if i := index(m, key); i >= 0 {
		return m.Content[i+1]
	}
	return nil
}

// Keys returns the keys of mapping m in order.
func Keys(m *yaml.Node) []string {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	var out []string
	for i := 0; i+1 < len(m.Content); i += 2 {
		out = append(out, m.Content[i].Value)
	}
	return out
}

func index(m *yaml.Node, key string) int {
	if m == nil || m.Kind != yaml.MappingNode {
		return -1
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return i
		}
	}
	return -1
}

// Set makes value the value of key in mapping m and returns the key node.
// An existing key keeps its place and its comments (the comment beside the
// old value moves beside the key when the new value is a block). A new key
// goes before the first key that follows it in order, or at the end when
// order does not list it.
func Set(m *yaml.Node, key string, value *yaml.Node, order []string) *yaml.Node {
	if m.Style&yaml.FlowStyle != 0 && len(m.Content) == 0 {
		m.Style &^= yaml.FlowStyle
	}
	if i := index(m, key); i >= 0 {
		old := m.Content[i+1]
		if old.LineComment != "" && value.LineComment == "" {
			if value.Kind == yaml.ScalarNode || value.Style&yaml.FlowStyle != 0 {
				value.LineComment = old.LineComment
			} else if m.Content[i].LineComment == "" {
				m.Content[i].LineComment = old.LineComment
			}
		}
		if value.FootComment == "" {
			value.FootComment = old.FootComment
		}
		m.Content[i+1] = value
		return m.Content[i]
	}
	k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}
	at := len(m.Content)
	if pos := slices.Index(order, key); pos >= 0 {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if p := slices.Index(order, m.Content[i].Value); p > pos {
				at = i
				break
			}
		}
	}
	// The comment below the last entry stays below the last entry.
	if at == len(m.Content) && at >= 2 {
		prevVal := m.Content[at-1]
		if prevVal.FootComment != "" && (prevVal.Kind != yaml.ScalarNode) {
			value.FootComment, prevVal.FootComment = prevVal.FootComment, ""
		}
	}
	m.Content = slices.Insert(m.Content, at, k, value)
	return k
}

// SpaceBefore puts a blank line before the new key k (a node Set returned)
// and its head comment, as between the sections of a hand-written file.
func SpaceBefore(k *yaml.Node) {
	if !strings.HasPrefix(k.HeadComment, blankSentinel) {
		k.HeadComment = joinComments(blankSentinel, k.HeadComment)
	}
}

// Delete removes key from mapping m with the comments above and beside it,
// and reports whether it was there. A comment below the removed entry moves
// below the entry before it.
func Delete(m *yaml.Node, key string) bool {
	i := index(m, key)
	if i < 0 {
		return false
	}
	k, v := m.Content[i], m.Content[i+1]
	foot := joinComments(k.FootComment, v.FootComment)
	m.Content = slices.Delete(m.Content, i, i+2)
	if foot != "" && i >= 2 {
		prev := lastLeaf(m.Content[i-1])
		prev.FootComment = joinComments(prev.FootComment, foot)
	}
	return true
}

// Items returns the entries of sequence n (nil for anything else).
func Items(n *yaml.Node) []*yaml.Node {
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	return n.Content
}

// Strings returns the scalar entries of sequence n.
func Strings(n *yaml.Node) []string {
	var out []string
	for _, it := range Items(n) {
		if it.Kind == yaml.ScalarNode {
			out = append(out, it.Value)
		}
	}
	return out
}

// Append adds item at the end of sequence seq. A scalar takes the quoting
// style of the last scalar entry when it has none.
func Append(seq, item *yaml.Node) {
	if item.Kind == yaml.ScalarNode && item.Style == 0 {
		for i := len(seq.Content) - 1; i >= 0; i-- {
			if c := seq.Content[i]; c.Kind == yaml.ScalarNode {
				item.Style = c.Style &^ (yaml.TaggedStyle)
				break
			}
		}
	}
	if n := len(seq.Content); n > 0 && seq.Content[n-1].FootComment != "" && seq.Content[n-1].Kind != yaml.ScalarNode {
		item.FootComment, seq.Content[n-1].FootComment = seq.Content[n-1].FootComment, ""
	}
	seq.Content = append(seq.Content, item)
}

// Remove deletes the entries of sequence seq for which drop is true, with
// their comments, and returns how many it removed. The comment below a
// removed entry moves below the entry before it.
func Remove(seq *yaml.Node, drop func(*yaml.Node) bool) int {
	if seq == nil || seq.Kind != yaml.SequenceNode {
		return 0
	}
	kept := seq.Content[:0:0]
	removed := 0
	for _, it := range seq.Content {
		if !drop(it) {
			kept = append(kept, it)
			continue
		}
		removed++
		if it.FootComment != "" {
			prev := seq // no entry left before it: the list keeps the comment
			if len(kept) > 0 {
				prev = lastLeaf(kept[len(kept)-1])
			}
			prev.FootComment = joinComments(prev.FootComment, it.FootComment)
		}
	}
	seq.Content = kept
	return removed
}

// lastLeaf returns the last scalar written inside n (n itself for a scalar
// or an empty collection): a comment moved there is printed right below n.
func lastLeaf(n *yaml.Node) *yaml.Node {
	for (n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode) && len(n.Content) > 0 && n.Style&yaml.FlowStyle == 0 {
		n = n.Content[len(n.Content)-1]
	}
	return n
}

func joinComments(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n" + b
}

// String returns a string scalar written plain when that reads back as the
// same string, quoted otherwise.
func String(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

// Quoted returns a double-quoted string scalar: safe for any value.
func Quoted(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Style: yaml.DoubleQuotedStyle}
}

// Int returns an integer scalar.
func Int(n int) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(n)}
}

// Bool returns a boolean scalar.
func Bool(b bool) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(b)}
}

// Map returns an empty block mapping.
func Map() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"} }

// Seq returns a block sequence of items.
func Seq(items ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: items}
}
