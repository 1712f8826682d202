package cmdutil

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

// Confirm asks question on w and reads one answer line from r: y or yes,
// in any case, is yes, anything else no. err is the reader's (io.EOF: the
// input ended, so there is nothing more to ask).
func Confirm(r *bufio.Reader, w io.Writer, question string) (bool, error) {
	fmt.Fprint(w, question)
	line, err := r.ReadString('\n')
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes", err
}

// IsTerminal reports whether r is a terminal: a question can be asked
// there (a pipe, a file or a CI runner's input never answers).
func IsTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	// Not a character device: /dev/null is one, and never answers (the
	// real-boot network test ran asb network learn </dev/null, and it asked).
	return term.IsTerminal(int(f.Fd()))
}
