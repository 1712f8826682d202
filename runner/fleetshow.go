package runner

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Shown is s for a terminal: a value from a label (anyone who creates a VM
// can set one) with control characters or escapes is printed quoted, so it
// cannot drive the terminal.
func Shown(s string) string {
	if strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }) {
		return strconv.Quote(s)
	}
	return s
}

// Bytes is n in binary units, as msb prints sizes ("10.0 KiB").
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// Age is how long ago t was, in its largest whole unit ("3d", "5h").
func Age(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// ParseAge reads --older-than: a whole number with s, m, h or d ("7d"),
// as msb prune's --older-than does.
func ParseAge(s string) (time.Duration, error) {
	units := map[byte]time.Duration{'s': time.Second, 'm': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour}
	if len(s) < 2 || units[s[len(s)-1]] == 0 {
		return 0, fmt.Errorf("%q is not an age: write a whole number and s, m, h or d (e.g. 7d, 12h)", s)
	}
	n, err := strconv.ParseUint(s[:len(s)-1], 10, 31)
	if err != nil {
		return 0, fmt.Errorf("%q is not an age: write a whole number and s, m, h or d (e.g. 7d, 12h)", s)
	}
	return time.Duration(n) * units[s[len(s)-1]], nil
}
