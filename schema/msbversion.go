package schema

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Keys some msb releases accept and others reject (MSBReleases' Keys): the
// committed folder never holds one of them, because a teammate's older
// msb would reject it; `asb msb-conf` writes them at create time, for the
// msb installed, into .asb/msb/ (MSBOverlay).

// VersionedKey is a config key that exists from release Since on.
type VersionedKey struct {
	File  string // SandboxFile or SecretsFile
	Path  string // dotted; "*" is any secret's name
	Since string // the first msb release that reads it (filled from its row)
	// Rejection is what an older msb says when it meets the key (as msb
	// 0.7.2 words it).
	Rejection string
	// WrittenBy is the asb feature that writes the key at create time, for
	// an msb that reads it.
	WrittenBy string
}

// Matches reports whether the dotted field path of file is this key.
func (k VersionedKey) Matches(file, path string) bool {
	if file != k.File {
		return false
	}
	want, got := strings.Split(k.Path, "."), strings.Split(path, ".")
	if len(want) != len(got) {
		return false
	}
	for i := range want {
		if want[i] != "*" && want[i] != got[i] {
			return false
		}
	}
	return true
}

// LackedKeys returns the versioned keys doc (the YAML of file) holds that
// a release without has (has(Since) false) rejects.
func LackedKeys(file string, doc []byte, has func(since string) bool) []VersionedKey {
	var root yaml.Node
	if yaml.Unmarshal(doc, &root) != nil || len(root.Content) == 0 {
		return nil
	}
	var out []VersionedKey
	for _, k := range VersionedKeys {
		if k.File == file && !has(k.Since) && present(root.Content[0], strings.Split(k.Path, ".")) {
			out = append(out, k)
		}
	}
	return out
}

func present(n *yaml.Node, path []string) bool {
	if len(path) == 0 {
		return true
	}
	if n.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if (path[0] == "*" || n.Content[i].Value == path[0]) && present(n.Content[i+1], path[1:]) {
			return true
		}
	}
	return false
}

// OverlayOptions are what the installed msb can be told beyond the
// committed files.
type OverlayOptions struct {
	// DenyMessage, when set, turns on network.http.deny_response with it
	// (msb 0.7.5+), for an allow-list network.
	DenyMessage string
	// HeaderFields maps a secret's name to the only headers it is
	// substituted in (msb 0.7.8+); secrets not named keep their own.
	HeaderFields map[string][]string
}

// MSBOverlay returns the extra --conf and --secret-conf documents for
// msb create ("" when there is nothing to add). Each repeats its section
// whole (network; every secret), so msb's overlay gives the same result
// whether it merges maps or replaces them; neither holds a host path or a
// secret value (secrets.yaml holds only ${VAR} references).
func MSBOverlay(sandbox, secrets []byte, o OverlayOptions) (sbConf, secConf []byte, err error) {
	if o.DenyMessage != "" {
		if sbConf, err = denyOverlay(sandbox, o.DenyMessage); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", SandboxFile, err)
		}
	}
	if len(o.HeaderFields) > 0 {
		if secConf, err = headerOverlay(secrets, o.HeaderFields); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", SecretsFile, err)
		}
	}
	return sbConf, secConf, nil
}

func denyOverlay(sandbox []byte, msg string) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(sandbox, &root); err != nil {
		return nil, err
	}
	nw := mapValue(docRoot(&root), "network")
	if nw == nil || nw.Kind != yaml.MappingNode || mapValue(nw, "allow") == nil {
		return nil, nil // none, public, open: no allow list whose refusals need words
	}
	nw = clean(nw)
	http := &yaml.Node{Kind: yaml.MappingNode}
	setScalar(http, "deny_response", "true", "!!bool")
	setScalar(http, "deny_message", msg, "!!str")
	nw.Content = append(nw.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "http"}, http)
	out := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: "network"}, nw}}
	return encode(out)
}

func headerOverlay(secrets []byte, fields map[string][]string) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(secrets, &root); err != nil {
		return nil, err
	}
	m := docRoot(&root)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	m = clean(m)
	changed := false
	for i := 0; i+1 < len(m.Content); i += 2 {
		hs := fields[m.Content[i].Value]
		sub := mapValue(m.Content[i+1], "substitution")
		if len(hs) == 0 || sub == nil || sub.Kind != yaml.MappingNode || mapValue(sub, "header_fields") != nil {
			continue
		}
		if h := mapValue(sub, "headers"); h == nil || h.Value != "true" {
			continue // no header substitution to narrow
		}
		list := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, h := range slices.Sorted(slices.Values(hs)) {
			list.Content = append(list.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: strings.ToLower(h)})
		}
		sub.Content = append(sub.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "header_fields"}, list)
		changed = true
	}
	if !changed {
		return nil, nil
	}
	return encode(m)
}

func docRoot(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		return n.Content[0]
	}
	return nil
}

func mapValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func setScalar(m *yaml.Node, key, value, tag string) {
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key},
		&yaml.Node{Kind: yaml.ScalarNode, Value: value, Tag: tag, Style: styleFor(tag)})
}

func styleFor(tag string) yaml.Style {
	if tag == "!!str" {
		return yaml.DoubleQuotedStyle
	}
	return 0
}

// clean is a deep copy of n without comments or positions.
func clean(n *yaml.Node) *yaml.Node {
	c := &yaml.Node{Kind: n.Kind, Tag: n.Tag, Value: n.Value, Style: n.Style &^ (yaml.LiteralStyle | yaml.FoldedStyle)}
	for _, k := range n.Content {
		c.Content = append(c.Content, clean(k))
	}
	return c
}

func encode(n *yaml.Node) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("# Written by asb msb-conf for the msb installed here; regenerated at each vm:create. Do not edit.\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return nil, err
	}
	return b.Bytes(), enc.Close()
}

// StripVersioned returns doc without the versioned keys of file, for a
// reader that knows only the keys every release accepts (the stand-in
// msb, after it has judged them by its version).
func StripVersioned(file string, doc []byte) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(doc, &root); err != nil || len(root.Content) == 0 {
		return doc, err
	}
	for _, k := range VersionedKeys {
		if k.File == file {
			strip(root.Content[0], strings.Split(k.Path, "."))
		}
	}
	return yaml.Marshal(&root)
}

func strip(n *yaml.Node, path []string) {
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if path[0] != "*" && n.Content[i].Value != path[0] {
			continue
		}
		if len(path) == 1 {
			n.Content = slices.Delete(n.Content, i, i+2)
			i -= 2
			continue
		}
		strip(n.Content[i+1], path[1:])
	}
}
