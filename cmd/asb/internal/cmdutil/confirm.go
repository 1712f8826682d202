package cmdutil

import (
	"bufio"
	"fmt"
	"io"
	"strings"
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
