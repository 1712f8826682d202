package schema

import (
	"fmt"
	"sort"
	"strings"
)

// Severity says whether a Problem stops the VM from being created (an
// error), deserves a look (a warning), or is only worth knowing (a note).
type Severity int

// The severities, most severe first.
const (
	SeverityError Severity = iota
	SeverityWarning
	SeverityNote
)

// String is "error", "warning" or "note".
func (s Severity) String() string {
	switch s {
	case SeverityWarning:
		return "warning"
	case SeverityNote:
		return "note"
	}
	return "error"
}

// MarshalText writes the severity as its name, for `asb validate --format json`.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads "error", "warning" or "note".
func (s *Severity) UnmarshalText(b []byte) error {
	switch string(b) {
	case "error":
		*s = SeverityError
	case "warning":
		*s = SeverityWarning
	case "note":
		*s = SeverityNote
	default:
		return fmt.Errorf("severity %q is neither error, warning nor note", b)
	}
	return nil
}

// Problem is one finding of a loader or of CheckDir: where (File relative to
// the outer folder, 1-based Line and Col, 0 when the problem is about the
// whole file), what is wrong (Msg), how to fix it (Fix) and the YAML field
// path (Field, e.g. "network.allow[1]"). No Problem ever holds a secret value.
type Problem struct {
	File     string   `json:"file"`
	Line     int      `json:"line"`
	Col      int      `json:"col"`
	Severity Severity `json:"severity"`
	Msg      string   `json:"message"`
	Fix      string   `json:"fix,omitempty"`
	Field    string   `json:"field,omitempty"`
}

// String renders the problem as compilers do:
// "sandbox.yaml:12:5: error: what is wrong — how to fix it".
func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
		if p.Col > 0 {
			fmt.Fprintf(&b, ":%d", p.Col)
		}
	}
	fmt.Fprintf(&b, ": %s: ", p.Severity)
	b.WriteString(p.Msg)
	if p.Fix != "" {
		b.WriteString(" — " + p.Fix)
	}
	return b.String()
}

// HasErrors reports whether any problem is an error (not only warnings).
func HasErrors(ps []Problem) bool {
	for _, p := range ps {
		if p.Severity == SeverityError {
			return true
		}
	}
	return false
}

// Count returns the number of errors and of warnings.
func Count(ps []Problem) (errs, warnings int) {
	for _, p := range ps {
		switch p.Severity {
		case SeverityError:
			errs++
		case SeverityWarning:
			warnings++
		}
	}
	return errs, warnings
}

// SortProblems orders problems by file, line, column, then severity and
// message, so output is stable.
func SortProblems(ps []Problem) {
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i], ps[j]
		switch {
		case a.File != b.File:
			return a.File < b.File
		case a.Line != b.Line:
			return a.Line < b.Line
		case a.Col != b.Col:
			return a.Col < b.Col
		case a.Severity != b.Severity:
			return a.Severity < b.Severity
		}
		return a.Msg < b.Msg
	})
}
