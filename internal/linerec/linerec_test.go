package linerec

import (
	"slices"
	"testing"
)

// TestRoundTrip: every kind of field is read back as written, strings
// with any byte (quotes, spaces, newlines, invalid UTF-8) included.
func TestRoundTrip(t *testing.T) {
	odd := "a \"b\"\n\tc \xff d"
	w := NewWriter("fmt 1")
	w.Line("s", odd, "")
	w.Line("n", int64(-5), uint64(1<<63), uint32(7), true)
	w.Line("l", []string{odd, "x"}, []string(nil))
	r := NewReader(w.Bytes(), "fmt 1")
	if r == nil {
		t.Fatalf("not read: %q", w.Bytes())
	}
	if tag, ok := r.Next(); !ok || tag != "s" || r.Str() != odd || r.Str() != "" {
		t.Errorf("strings: %q", w.Bytes())
	}
	if tag, ok := r.Next(); !ok || tag != "n" || r.Int() != -5 || r.Uint() != 1<<63 || r.Uint() != 7 || !r.Bool() {
		t.Errorf("numbers: %q", w.Bytes())
	}
	if tag, ok := r.Next(); !ok || tag != "l" || !slices.Equal(r.List(), []string{odd, "x"}) || r.List() != nil {
		t.Errorf("lists: %q", w.Bytes())
	}
	if _, ok := r.Next(); ok || !r.OK() {
		t.Errorf("the end: ok %v", r.OK())
	}
}

// TestBadRecords: another format, a cut last line, a field left over, a
// field of the wrong kind, a list longer than its line: none is OK.
func TestBadRecords(t *testing.T) {
	if NewReader([]byte("fmt 2\ns \"x\"\n"), "fmt 1") != nil {
		t.Error("another format was read")
	}
	if NewReader([]byte("fmt 1\ns \"x\""), "fmt 1") != nil {
		t.Error("a cut last line was read")
	}
	for name, c := range map[string]struct {
		raw  string
		read func(r *Reader)
	}{
		"left over":  {"fmt 1\ns \"x\" 3\n", func(r *Reader) { r.Str() }},
		"not a str":  {"fmt 1\ns x\n", func(r *Reader) { r.Str() }},
		"glued":      {"fmt 1\ns \"x\"\"y\"\n", func(r *Reader) { r.Str(); r.Str() }},
		"not an int": {"fmt 1\nn 1.5\n", func(r *Reader) { r.Int() }},
		"not a bool": {"fmt 1\nb yes\n", func(r *Reader) { r.Bool() }},
		"missing":    {"fmt 1\nn\n", func(r *Reader) { r.Int() }},
		"long list":  {"fmt 1\nl 3 \"a\"\n", func(r *Reader) { r.List() }},
		"negative":   {"fmt 1\nl -1\n", func(r *Reader) { r.List() }},
	} {
		r := NewReader([]byte(c.raw), "fmt 1")
		for _, ok := r.Next(); ok; _, ok = r.Next() {
			c.read(r)
		}
		if r.OK() {
			t.Errorf("%s: %q read as OK", name, c.raw)
		}
	}
}
