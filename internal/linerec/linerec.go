// Package linerec reads and writes the small records a warm run reads
// (the warm pass, the warm record): lines a few string cuts read, not a
// document a general decoder walks, whose code alone a warm run would pay
// for. The first line names the record's format; each other line is a
// tag and its fields, separated by one space: a string quoted as Go
// quotes it (so it holds any byte), a number, a bool, or a list (its
// length, then its strings).
package linerec

import (
	"fmt"
	"strconv"
	"strings"
)

// Writer makes a record.
type Writer struct{ b strings.Builder }

// NewWriter starts a record of format.
func NewWriter(format string) *Writer {
	w := &Writer{}
	w.b.WriteString(format)
	w.b.WriteByte('\n')
	return w
}

// Line writes a line of tag and fields: each a string, a []string, a
// bool, or an integer.
func (w *Writer) Line(tag string, fields ...any) {
	w.b.WriteString(tag)
	for _, f := range fields {
		w.b.WriteByte(' ')
		switch v := f.(type) {
		case string:
			w.b.WriteString(strconv.Quote(v))
		case []string:
			w.b.WriteString(strconv.Itoa(len(v)))
			for _, s := range v {
				w.b.WriteByte(' ')
				w.b.WriteString(strconv.Quote(s))
			}
		default:
			fmt.Fprint(&w.b, v) // a bool or an integer
		}
	}
	w.b.WriteByte('\n')
}

// Bytes is the record.
func (w *Writer) Bytes() []byte { return []byte(w.b.String()) }

// Reader reads a record line by line. A field that is not what its
// reader asks for makes the whole record bad (OK is false).
type Reader struct {
	lines []string
	rest  string
	bad   bool
}

// NewReader reads raw, a record of format; nil when it is of another
// format or does not end with a whole line.
func NewReader(raw []byte, format string) *Reader {
	lines := strings.Split(string(raw), "\n")
	if len(lines) < 2 || lines[0] != format || lines[len(lines)-1] != "" {
		return nil
	}
	return &Reader{lines: lines[1 : len(lines)-1]}
}

// Next moves to the next line and returns its tag; false at the end (or
// when the line before it had fields left over).
func (r *Reader) Next() (string, bool) {
	if r.rest != "" {
		r.bad = true
	}
	if r.bad || len(r.lines) == 0 {
		return "", false
	}
	tag, rest, _ := strings.Cut(r.lines[0], " ")
	r.lines, r.rest = r.lines[1:], rest
	return tag, true
}

// OK reports whether every line was read whole and as asked.
func (r *Reader) OK() bool { return !r.bad && r.rest == "" && len(r.lines) == 0 }

// Fail marks the record bad (a tag its reader does not know).
func (r *Reader) Fail() { r.bad = true }

func (r *Reader) word() string {
	w, rest, _ := strings.Cut(r.rest, " ")
	r.rest = rest
	if w == "" {
		r.bad = true
	}
	return w
}

// Str reads a quoted string.
func (r *Reader) Str() string {
	q, err := strconv.QuotedPrefix(r.rest)
	if err != nil {
		r.bad = true
		return ""
	}
	v, err := strconv.Unquote(q)
	r.bad = r.bad || err != nil || len(q) < len(r.rest) && r.rest[len(q)] != ' '
	r.rest = strings.TrimPrefix(r.rest[len(q):], " ")
	return v
}

// Int reads an integer.
func (r *Reader) Int() int64 {
	n, err := strconv.ParseInt(r.word(), 10, 64)
	r.bad = r.bad || err != nil
	return n
}

// Uint reads an unsigned integer.
func (r *Reader) Uint() uint64 {
	n, err := strconv.ParseUint(r.word(), 10, 64)
	r.bad = r.bad || err != nil
	return n
}

// Bool reads true or false.
func (r *Reader) Bool() bool {
	b, err := strconv.ParseBool(r.word())
	r.bad = r.bad || err != nil
	return b
}

// List reads a list of strings (nil when it is empty).
func (r *Reader) List() []string {
	n := r.Int()
	if r.bad || n < 0 || n > int64(len(r.rest)) {
		r.bad = true
		return nil
	}
	var out []string
	for range n {
		out = append(out, r.Str())
	}
	return out
}
