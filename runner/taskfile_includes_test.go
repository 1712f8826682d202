package runner

import (
	"encoding/binary"
	"testing"
	"unicode/utf16"
)

// ParseIncludes finds an include however the document spells its key: the
// shortcut for documents without the word must not miss an escaped key or
// another encoding the YAML parser (and so go-task) reads.
func TestParseIncludesSpellings(t *testing.T) {
	utf16le := func(s string) []byte {
		b := []byte{0xff, 0xfe}
		for _, u := range utf16.Encode([]rune(s)) {
			b = binary.LittleEndian.AppendUint16(b, u)
		}
		return b
	}
	for name, doc := range map[string][]byte{
		"plain":         []byte("version: '3'\nincludes:\n  x: ./sub/t.yml\n"),
		"single-quoted": []byte("version: '3'\n'includes':\n  x: ./sub/t.yml\n"),
		"escaped":       []byte("version: '3'\n\"\\x69ncludes\":\n  x: ./sub/t.yml\n"),
		"escaped break": []byte("version: '3'\n? \"incl\\\n  udes\"\n:\n  x: ./sub/t.yml\n"),
		"utf-16":        utf16le("version: '3'\nincludes:\n  x: ./sub/t.yml\n"),
		"binary":        []byte("version: '3'\n!!binary aW5jbHVkZXM=:\n  x: ./sub/t.yml\n"),
		"binary escape": []byte("version: '3'\n!!%62inary aW5jbHVkZXM=:\n  x: ./sub/t.yml\n"),
		"binary verb":   []byte("version: '3'\n!<tag:yaml.org,2002:binary> aW5jbHVkZXM=:\n  x: ./sub/t.yml\n"),
		"binary %TAG":   []byte("%TAG !b! tag:yaml.org,2002:bi\n---\nversion: '3'\n!b!nary aW5jbHVkZXM=:\n  x: ./sub/t.yml\n"),
	} {
		incs, err := ParseIncludes(doc)
		if err != nil || len(incs) != 1 || incs[0].Taskfile != "./sub/t.yml" || incs[0].Namespace != "x" {
			t.Errorf("%s: %+v, %v; want the one include x: ./sub/t.yml", name, incs, err)
		}
	}
	if incs, err := ParseIncludes([]byte("version: '3'\ntasks:\n  a:\n    cmds: [echo inc]\n")); err != nil || len(incs) != 0 {
		t.Errorf("no includes: %+v, %v", incs, err)
	}
}
