package schema

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	switch n.ShortTag() {
	case "!!null":
		return "null"
	case "!!bool":
		return "a boolean"
	case "!!int":
		return "an integer"
	case "!!float":
		return "a number"
	case "!!str":
		return "a string"
	}
	return "a " + strings.TrimPrefix(n.ShortTag(), "!!")
}

func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

// skip reports whether n was already reported by rejectFeatures.
func skip(n *yaml.Node) bool { return n.Kind == yaml.AliasNode }

func (l *loader) str(n *yaml.Node, field string) (string, bool) {
	if skip(n) {
		return "", false
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		fix := "write a string"
		if n.Kind == yaml.ScalarNode {
			fix = "quote it to make it a string, e.g. \"...\""
		}
		l.errf(n, field, fix, "%s must be a string, not %s", field, describe(n))
		return "", false
	}
	l.at[field] = n
	return n.Value, true
}

var yaml11Bools = []string{"yes", "no", "on", "off", "y", "n"}

func (l *loader) boolean(n *yaml.Node, field string) (bool, bool) {
	if skip(n) {
		return false, false
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!bool" {
		l.at[field] = n
		return strings.EqualFold(n.Value, "true"), true
	}
	if n.Kind == yaml.ScalarNode && n.Style == 0 && slices.Contains(yaml11Bools, strings.ToLower(n.Value)) {
		want := "true"
		if v := strings.ToLower(n.Value); v == "no" || v == "off" || v == "n" {
			want = "false"
		}
		l.errf(n, field, "write "+want, "%s: bare %s is a string in YAML 1.2, and msb rejects it where a boolean is expected", field, n.Value)
		return false, false
	}
	l.errf(n, field, "write true or false", "%s must be a boolean, not %s", field, describe(n))
	return false, false
}

// wholeNumber reads an integer of any size (a rule judges its range).
func (l *loader) wholeNumber(n *yaml.Node, field string) (int64, bool) {
	if skip(n) {
		return 0, false
	}
	var v int64
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&v) != nil {
		l.errf(n, field, "write a whole number, unquoted", "%s must be an integer, not %s", field, describe(n))
		return 0, false
	}
	l.at[field] = n
	return v, true
}

func (l *loader) integer(n *yaml.Node, field string, min, max int64) (int64, bool) {
	if skip(n) {
		return 0, false
	}
	var v int64
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&v) != nil {
		l.errf(n, field, fmt.Sprintf("write a whole number from %d to %d, unquoted", min, max), "%s must be an integer, not %s", field, describe(n))
		return 0, false
	}
	if v < min || v > max {
		l.errf(n, field, fmt.Sprintf("use a number from %d to %d", min, max), "%s is %d, out of range", field, v)
		return 0, false
	}
	l.at[field] = n
	return v, true
}

func (l *loader) oneOf(n *yaml.Node, field string, allowed ...string) (string, bool) {
	s, ok := l.str(n, field)
	if !ok {
		return "", false
	}
	if !slices.Contains(allowed, s) {
		l.errf(n, field, "use one of: "+strings.Join(allowed, ", "), "%s %q is not a valid value", field, s)
		return "", false
	}
	return s, true
}

func (l *loader) seq(n *yaml.Node, field string) ([]*yaml.Node, bool) {
	if skip(n) {
		return nil, false
	}
	if n.Kind != yaml.SequenceNode {
		l.errf(n, field, "write a YAML list (one `- item` per line, or [a, b])", "%s must be a list, not %s", field, describe(n))
		return nil, false
	}
	l.at[field] = n
	return n.Content, true
}

func (l *loader) strList(n *yaml.Node, field string) []string {
	items, ok := l.seq(n, field)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		if s, ok := l.str(it, fmt.Sprintf("%s[%d]", field, i)); ok {
			out = append(out, s)
		}
	}
	return out
}

// mapping calls fn for each key of n (a mapping) after checking it is known
// and not duplicated; keys == nil accepts any string key.
func (l *loader) mapping(n *yaml.Node, field string, keys []string, fn func(key string, k, v *yaml.Node)) bool {
	if skip(n) {
		return false
	}
	if n.Kind != yaml.MappingNode {
		what := field
		if what == "" {
			what = "the file"
		}
		l.errf(n, field, "write a mapping of `key: value` lines", "%s must be a mapping, not %s", what, describe(n))
		return false
	}
	if field != "" {
		l.at[field] = n
	}
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.ShortTag() == "!!merge" {
			if k.ShortTag() != "!!merge" && !skip(k) {
				l.errf(k, field, "use plain names as keys", "%s: a key must be a plain name, not %s", orFile(field), describe(k))
			}
			continue
		}
		name := k.Value
		if k.ShortTag() == "!!null" || name == "" {
			l.errf(k, field, "give the key a name", "%s: a key is empty", orFile(field))
			continue
		}
		path := joinField(field, name)
		if first, dup := seen[name]; dup {
			l.errf(k, path, fmt.Sprintf("remove one of them (the first is on line %d)", first.Line), "key %s is given twice", name)
			continue
		}
		seen[name] = k
		if keys != nil && !slices.Contains(keys, name) && l.versionedKey(k, path) {
			continue
		}
		if keys != nil && !slices.Contains(keys, name) {
			fix := "remove it; accepted keys: " + strings.Join(keys, ", ")
			if s := closest(name, keys); s != "" {
				fix = fmt.Sprintf("did you mean %s? accepted keys: %s", s, strings.Join(keys, ", "))
			}
			l.errf(k, path, fix, "unknown key %s in %s (msb rejects unknown keys)", name, orFile(field))
			continue
		}
		fn(name, k, v)
	}
	return true
}

func orFile(field string) string {
	if field == "" {
		return "the top level"
	}
	return field
}

func joinField(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

func (l *loader) strMap(n *yaml.Node, field string) map[string]string {
	out := map[string]string{}
	l.mapping(n, field, nil, func(key string, _, v *yaml.Node) {
		if s, ok := l.str(v, field+"."+key); ok {
			out[key] = s
		}
	})
	return out
}

// closest returns the accepted key nearest to s, if it is a likely typo.
func closest(s string, keys []string) string {
	best, bestD := "", 3
	for _, k := range keys {
		if d := editDistance(s, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
