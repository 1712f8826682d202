package runner

import (
	"bufio"
	"bytes"
	"context"
	"strconv"
	"strings"
	"unicode/utf8"
)

// lastWordsLines and lastWordsWidth bound what LastWords returns.
const (
	lastWordsLines = 8
	lastWordsWidth = 200
)

// LastWords is the end of what msb logged of vm's system source (msb's
// runtime and the VM kernel's console), its DEBUG and TRACE lines left
// out: at most lastWordsLines lines, each cut to lastWordsWidth bytes;
// nothing when msb has none or cannot say. For a VM about to be removed,
// whose log goes with it: why it stopped ("Received KVM_EXIT_SHUTDOWN
// signal", a kernel's panic) is the user's to see. It is msb's and the
// VM's text: it reaches a terminal only through termtext, as all output.
func (m MSB) LastWords(ctx context.Context, vm string) []string {
	out, err := Output(ctx, "", m.bin(), "logs", vm, "--source", "system", "--json", "--tail", strconv.Itoa(40*lastWordsLines))
	if err != nil {
		return nil
	}
	var words []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		_, body, ok := systemEntry(sc.Bytes())
		if !ok || strings.TrimSpace(body) == "" || debugLine(body) {
			continue
		}
		words = append(words, clipLine(body, lastWordsWidth))
	}
	return words[max(0, len(words)-lastWordsLines):]
}

// debugLine reports whether a line of msb's log is one of its DEBUG or
// TRACE diagnostics (a VM created with --log-level debug logs every
// virtio-fs request: they say nothing of why it stopped).
func debugLine(body string) bool {
	level, _, _ := strings.Cut(strings.TrimSpace(body), " ")
	return level == "DEBUG" || level == "TRACE"
}

// clipLine is line cut to at most width bytes, not in the middle of a
// character, with "…" where it was cut.
func clipLine(line string, width int) string {
	if len(line) <= width {
		return line
	}
	cut := width
	for cut > 0 && !utf8.RuneStart(line[cut]) {
		cut--
	}
	return line[:cut] + "…"
}
