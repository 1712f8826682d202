package termtext

import (
	"io"
	"unicode/utf8"
)

// Style is one of asb's own SGR styles: the only escapes asb writes to a
// terminal, put around text that is itself shown sanitized.
type Style int

const (
	// Plain is no style.
	Plain Style = iota
	// Alarm is bold red: what widens the boundary, a warning not to miss.
	Alarm
	// Bold is bold.
	Bold
)

var sgr = map[Style][2]string{
	Alarm: {"\x1b[1;31m", "\x1b[0m"},
	Bold:  {"\x1b[1m", "\x1b[0m"},
}

// WriteStyled writes s sanitized, in style st when the underlying writer is
// a terminal that takes colour.
func (w *Writer) WriteStyled(st Style, s string) error {
	if err := w.Flush(); err != nil {
		return err
	}
	codes, ok := sgr[st]
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []byte
	if ok && w.color {
		out = append(out, codes[0]...)
	}
	out = appendVisible(out, []byte(s))
	if ok && w.color {
		out = append(out, codes[1]...)
	}
	_, err := w.w.Write(out)
	return err
}

// Fprint writes s to w in style st: styled when w is a Writer on a
// terminal, plain otherwise (a buffer that is printed later goes through
// one then).
func Fprint(w io.Writer, st Style, s string) error {
	if tw, ok := w.(*Writer); ok {
		return tw.WriteStyled(st, s)
	}
	_, err := io.WriteString(w, s)
	return err
}

// Ring rings the terminal's bell on w: a BEL of asb's own (a notification,
// asb attach --notify bell), written as it is even through a Writer, which
// shows every other BEL as ^G.
func Ring(w io.Writer) error {
	if tw, ok := w.(*Writer); ok {
		if err := tw.Flush(); err != nil {
			return err
		}
		tw.mu.Lock()
		defer tw.mu.Unlock()
		w = tw.w
	}
	_, err := io.WriteString(w, "\a")
	return err
}

// JSON returns a writer for a JSON document on its way to w: the characters
// a Writer would show as \x9b or \u202e (DEL, C1 controls, bidi
// overrides) are written as JSON escapes instead (\u009b), which mean the
// same to a JSON reader and pass a Writer as they are. encoding/json
// escapes the C0 controls itself.
func JSON(w io.Writer) io.Writer { return &jsonWriter{w: w} }

type jsonWriter struct {
	w       io.Writer
	pending []byte
}

func (j *jsonWriter) Write(p []byte) (int, error) {
	in := p
	if len(j.pending) > 0 {
		in = append(j.pending, p...)
		j.pending = nil
	}
	if tail := incompleteTail(in); tail > 0 {
		j.pending = append([]byte(nil), in[len(in)-tail:]...)
		in = in[:len(in)-tail]
	}
	out := make([]byte, 0, len(in))
	for i := 0; i < len(in); {
		r, size := rune(in[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRune(in[i:])
		}
		if r == 0x7F || (r >= 0x80 && r <= 0x9F) || bidiControl(r) {
			out = append(out, '\\', 'u')
			for shift := 12; shift >= 0; shift -= 4 {
				out = append(out, hexDigits[(r>>shift)&0xF])
			}
		} else {
			out = append(out, in[i:i+size]...)
		}
		i += size
	}
	if _, err := j.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}
