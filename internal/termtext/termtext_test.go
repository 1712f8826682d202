package termtext

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// The escape classes a hostile text uses, and how each is shown.
var classes = []struct{ name, in, want string }{
	{"CSI cursor up + erase line", "ok\x1b[1A\x1b[2K", "ok^[[1A^[[2K"},
	{"OSC 52 clipboard", "\x1b]52;c;ZWNobyBoaQ==\x07", "^[]52;c;ZWNobyBoaQ==^G"},
	{"C1 CSI", "a\u009b1Ab", `a\x9b1Ab`},
	{"C1 OSC", "\u009d52;c;x\u009c", `\x9d52;c;x\x9c`},
	{"BEL", "ding\a", "ding^G"},
	{"carriage return", "safe\rEVIL", "safe^MEVIL"},
	{"DEL and NUL", "a\x7fb\x00", "a^?b^@"},
	{"bidi override", "if x \u202e} {\u2066", `if x \u202e} {\u2066`},
	{"invalid UTF-8", "a\xffb\xc3", `a\xffb\xc3`},
	{"tab, newline, text", "a\tb\nc é ü 漢字 🙂", "a\tb\nc é ü 漢字 🙂"},
}

func TestSanitize(t *testing.T) {
	for _, c := range classes {
		if got := Sanitize(c.in); got != c.want {
			t.Errorf("%s: Sanitize(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
	}
}

// Whatever is written, in whatever pieces, no byte a terminal obeys comes
// out: only tab, newline and printable text.
func TestWriterEveryByteVisible(t *testing.T) {
	var all []byte
	for b := 0; b < 256; b++ {
		all = append(all, byte(b))
	}
	all = append(all, "\u009b\u202e\u2069é"...)
	for _, step := range []int{1, 2, 3, 7, len(all)} {
		var buf bytes.Buffer
		w := New(&buf)
		for i := 0; i < len(all); i += step {
			if _, err := w.Write(all[i:min(i+step, len(all))]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		for _, r := range buf.String() {
			if (r < 0x20 && r != '\t' && r != '\n') || (r >= 0x7F && r <= 0x9F) || bidiControl(r) || r == 0xFFFD {
				t.Fatalf("step %d: %U came out raw: %q", step, r, buf.String())
			}
		}
	}
}

// A rune split across two writes is shown whole, not as two invalid bytes;
// one that never completes is shown as its bytes at Flush.
func TestWriterSplitRune(t *testing.T) {
	var buf bytes.Buffer
	w := New(&buf)
	for _, p := range []string{"a\xc3", "\xa9b\xe2\x80", "\xae c\xf0\x9f", "\x99\x82", "\xe2"} {
		if n, err := w.Write([]byte(p)); err != nil || n != len(p) {
			t.Fatalf("Write(%q) = %d, %v", p, n, err)
		}
	}
	if got, want := buf.String(), `aéb\u202e c🙂`; got != want {
		t.Errorf("before Flush: %q, want %q", got, want)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.String(), `aéb\u202e c🙂\xe2`; got != want {
		t.Errorf("after Flush: %q, want %q", got, want)
	}
}

// Styles are SGR codes of asb's own around sanitized text, on a terminal
// only; elsewhere the text alone.
func TestStyle(t *testing.T) {
	var buf bytes.Buffer
	w := New(&buf)
	if err := Fprint(w, Alarm, "WARN\x1b[2K"); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != "WARN^[[2K" {
		t.Errorf("not a terminal: %q", got)
	}
	buf.Reset()
	w.color = true
	if err := Fprint(w, Alarm, "WARN\x1b[2K"); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.String(), "\x1b[1;31mWARN^[[2K\x1b[0m"; got != want {
		t.Errorf("terminal: %q, want %q", got, want)
	}
	if New(w) != w {
		t.Error("New of a Writer is not that Writer")
	}
}

// JSON keeps a document valid and exact through a Writer: what the Writer
// would show as \x9b is a JSON escape instead.
func TestJSON(t *testing.T) {
	in := map[string]string{"name": "a\x1b[2K\u009b\u202e\x7f\ab"}
	var buf bytes.Buffer
	if err := json.NewEncoder(JSON(New(&buf))).Encode(in); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(buf.String(), "\x1b\u009b\u202e\x7f\a") || strings.Contains(buf.String(), `\x`) {
		t.Errorf("raw or invalid in %q", buf.String())
	}
	var back map[string]string
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatalf("%v: %q", err, buf.String())
	}
	if back["name"] != in["name"] {
		t.Errorf("round trip: %q, want %q", back["name"], in["name"])
	}
}

// asb's own bell rings through a Writer; a BEL in the text is shown.
func TestRing(t *testing.T) {
	var buf bytes.Buffer
	w := New(&buf)
	_, _ = w.Write([]byte("x\a"))
	if err := Ring(w); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != "x^G\a" {
		t.Errorf("%q, want x^G then a raw BEL", got)
	}
}
