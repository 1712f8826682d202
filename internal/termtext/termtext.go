// Package termtext is asb's one printer for text a terminal shows. Text
// from the VM (a diff of what the agent committed, a file name), from a
// cloned folder (a Dockerfile line in the trust review) or from msb's log
// may hold bytes a terminal obeys: ESC sequences that move the cursor and
// erase what was printed (a line that hides itself from the review that
// approves it), OSC 52 that writes the clipboard, C1 controls, BEL, and the
// bidi overrides that show text in another order than it runs. A Writer
// shows every such byte visibly instead: ESC as ^[, any other C0 control as
// ^X (carriage return as ^M), DEL as ^?, a C1 control as \x9b, a byte that
// is not UTF-8 as \xNN, a bidi override or isolate as \u202e. Tab and
// newline pass.
//
// asb's commands print through one: cmdutil's IOStreams are Writers (root
// wraps them), and so are the go-task engine's streams. asb's own colour
// goes through Style, a fixed set of SGR styles put around sanitized text;
// no string asb prints carries an escape of its own.
package termtext

import (
	"io"
	"os"
	"sync"
	"unicode/utf8"

	"golang.org/x/term"
)

// Writer writes what it is given to an underlying writer with every
// control character shown visibly (see the package comment). A rune split
// across two Writes is shown whole; Flush shows an incomplete one left at
// the end.
type Writer struct {
	mu      sync.Mutex
	w       io.Writer
	color   bool
	pending []byte // the start of a rune the next Write may complete
}

// New returns a Writer over w; w itself when it is one already. Styles are
// shown when w is a terminal and NO_COLOR is unset.
func New(w io.Writer) *Writer {
	if tw, ok := w.(*Writer); ok {
		return tw
	}
	return &Writer{w: w, color: IsTerminal(w) && os.Getenv("NO_COLOR") == ""}
}

// IsTerminal reports whether w is (or writes to) a terminal.
func IsTerminal(w io.Writer) bool {
	if tw, ok := w.(*Writer); ok {
		w = tw.w
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Unwrap is the writer under w: the raw channel, for a program the user
// chose to give the terminal to (the agent's own interface).
func (w *Writer) Unwrap() io.Writer { return w.w }

// Raw is the writer under w when w is asb's printer, else w itself: the
// raw channel for a program the user chose to give the terminal to.
func Raw(w io.Writer) io.Writer {
	if tw, ok := w.(*Writer); ok {
		return tw.w
	}
	return w
}

// Write shows p with its control characters visible. It reports len(p)
// written when the underlying write succeeds.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	in := p
	if len(w.pending) > 0 {
		in = append(w.pending, p...)
		w.pending = nil
	}
	if tail := incompleteTail(in); tail > 0 {
		w.pending = append([]byte(nil), in[len(in)-tail:]...)
		in = in[:len(in)-tail]
	}
	if _, err := w.w.Write(appendVisible(nil, in)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush shows what is left of a rune that never completed.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.pending) == 0 {
		return nil
	}
	out := appendInvalid(nil, w.pending)
	w.pending = nil
	_, err := w.w.Write(out)
	return err
}

// incompleteTail is the length of the start of a UTF-8 sequence that ends
// p and could still complete (0 when there is none).
func incompleteTail(p []byte) int {
	for n := 1; n <= utf8.UTFMax-1 && n <= len(p); n++ {
		b := p[len(p)-n]
		if b < 0x80 {
			return 0
		}
		if b >= 0xC0 { // a leading byte: does the sequence need more?
			if !utf8.FullRune(p[len(p)-n:]) {
				return n
			}
			return 0
		}
	}
	return 0
}

// Sanitize returns s with its control characters shown visibly.
func Sanitize(s string) string {
	if plain(s) {
		return s
	}
	return string(appendVisible(nil, []byte(s)))
}

func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\t' && c != '\n') || c >= 0x7F {
			return false
		}
	}
	return true
}

const hexDigits = "0123456789abcdef"

// appendVisible appends p to out with every control character visible.
func appendVisible(out, p []byte) []byte {
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == '\t' || c == '\n' || (c >= 0x20 && c < 0x7F):
			out = append(out, c)
			i++
			continue
		case c < 0x20:
			out = append(out, '^', c+'@')
			i++
			continue
		case c == 0x7F:
			out = append(out, '^', '?')
			i++
			continue
		}
		r, size := utf8.DecodeRune(p[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			out = appendInvalid(out, p[i:i+1])
		case r >= 0x80 && r <= 0x9F:
			out = append(out, '\\', 'x', hexDigits[r>>4], hexDigits[r&0xF])
		case bidiControl(r):
			out = append(out, '\\', 'u')
			for shift := 12; shift >= 0; shift -= 4 {
				out = append(out, hexDigits[(r>>shift)&0xF])
			}
		default:
			out = append(out, p[i:i+size]...)
		}
		i += size
	}
	return out
}

func appendInvalid(out, p []byte) []byte {
	for _, b := range p {
		out = append(out, '\\', 'x', hexDigits[b>>4], hexDigits[b&0xF])
	}
	return out
}

// bidiControl reports whether r is a bidi embedding, override or isolate
// (U+202A–U+202E, U+2066–U+2069): text after it is shown in another order
// than it is stored and run.
func bidiControl(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}
