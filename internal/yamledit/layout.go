package yamledit

import "strings"

// blankSentinel is the head comment SpaceBefore puts on a new key; Bytes
// turns its line into an empty line.
const blankSentinel = "#asb-yamledit-blank-line"

func blankSentinels(b []byte) []byte {
	var out []string
	for l := range strings.SplitSeq(string(b), "\n") {
		if strings.TrimSpace(l) == blankSentinel {
			if len(out) > 0 && strings.TrimSpace(out[len(out)-1]) == "" {
				continue // the encoder left a blank line here already
			}
			l = ""
		}
		out = append(out, l)
	}
	return []byte(strings.Join(out, "\n"))
}

// restoreLayout returns plain (the encoder's output) with the original's
// layout put back: every encoded line that matches an original line (same
// indentation and content, inline comment spacing aside; comment lines at
// any indentation) is replaced by the original line, and the blank lines of
// the original reappear between lines that are still neighbours.
//
// With looseComments false, comment lines must keep their indentation too: a
// comment moved to another indentation can attach to another node.
func restoreLayout(orig, plain []byte, looseComments bool) []byte {
	o, p := splitLayout(orig, looseComments), splitLayout(plain, looseComments)
	match := lcs(o.keys, p.keys) // match[i] = index in p.keys, or -1
	blanksBefore := blankRuns(o, match, len(p.keys))
	// Trailing blank lines of the original are not restored: files end
	// with one newline.
	var out []string
	for j := range p.keys {
		start := 0
		if j > 0 {
			start = p.idx[j-1] + 1
		}
		have := p.idx[j] - start // blank lines the encoder wrote here
		for k := start; k < p.idx[j]; k++ {
			out = append(out, p.lines[k].text)
		}
		for k := have; k < blanksBefore[j]; k++ {
			out = append(out, "")
		}
		text := p.lines[p.idx[j]].text
		for i := range o.keys {
			if match[i] == j {
				text = o.lines[o.idx[i]].text
				break
			}
		}
		out = append(out, text)
	}
	return []byte(strings.Join(out, "\n") + "\n")
}

type layoutLine struct {
	text  string
	key   string
	blank bool
}

// layout is a document's lines, with the key and position of each
// non-blank one.
type layout struct {
	lines []layoutLine
	keys  []string
	idx   []int // position of each non-blank line in lines
}

func splitLayout(b []byte, looseComments bool) layout {
	var l layout
	for t := range strings.SplitSeq(strings.TrimSuffix(string(b), "\n"), "\n") {
		ln := layoutLine{text: t, key: matchKey(t, looseComments), blank: strings.TrimSpace(t) == ""}
		if !ln.blank {
			l.keys, l.idx = append(l.keys, ln.key), append(l.idx, len(l.lines))
		}
		l.lines = append(l.lines, ln)
	}
	return l
}

// blankRuns returns, for each non-blank plain line j, how many blank lines
// the original had before it, when j and the plain line before it are the
// images of original lines with only blank (or deleted) lines between.
func blankRuns(o layout, match []int, n int) []int {
	blanksBefore := make([]int, n)
	prevMatched := -1 // last matched original non-blank index
	for i := range o.keys {
		j := match[i]
		if j < 0 {
			continue
		}
		// Lines the edit inserted right after a matched line belong to it:
		// the blank lines go after them, before this one.
		if prevMatched >= 0 || j == 0 {
			start := 0
			if prevMatched >= 0 {
				start = o.idx[prevMatched] + 1
			}
			// Everything in between is blank or gone from the output (a
			// deleted block): keep the longest run of blank lines.
			run, longest := 0, 0
			for k := start; k < o.idx[i]; k++ {
				if o.lines[k].blank {
					run++
					longest = max(longest, run)
				} else {
					run = 0
				}
			}
			blanksBefore[j] = longest
		}
		prevMatched = i
	}
	return blanksBefore
}

// matchKey is what two lines must share to be "the same line": a comment
// line is compared without its indentation, any other line with it, with
// trailing spaces and the spacing before an inline comment ignored.
func matchKey(l string, looseComments bool) string {
	t := strings.TrimSpace(l)
	ind := len(l) - len(strings.TrimLeft(l, " "))
	if strings.HasPrefix(t, "#") {
		if looseComments {
			return t
		}
		return strings.Repeat(" ", ind) + t
	}
	body := string(stripComment(strings.TrimLeft(l, " ")))
	rest := strings.TrimSpace(strings.TrimPrefix(strings.TrimLeft(l, " "), body))
	key := strings.Repeat(" ", ind) + strings.TrimRight(body, " \t")
	if rest != "" {
		key += " " + rest
	}
	return key
}

// stripComment returns line without a trailing "# comment", minding quotes.
func stripComment(line string) []byte {
	inSingle, inDouble := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case inDouble && c == '\\':
			i++
		case c == '"' && !inSingle:
			inDouble = !inDouble
		case c == '\'' && !inDouble:
			inSingle = !inSingle
		case c == '#' && !inSingle && !inDouble && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
			return []byte(line[:i])
		}
	}
	return []byte(line)
}

// lcs matches a to b (a longest common subsequence); match[i] is the index
// in b of a[i], or -1.
func lcs(a, b []string) []int {
	n, m := len(a), len(b)
	t := make([][]int32, n+1)
	for i := range t {
		t[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				t[i][j] = t[i+1][j+1] + 1
			} else {
				t[i][j] = max(t[i+1][j], t[i][j+1])
			}
		}
	}
	match := make([]int, n)
	for i := range match {
		match[i] = -1
	}
	for i, j := 0, 0; i < n && j < m; {
		switch {
		case a[i] == b[j]:
			match[i] = j
			i++
			j++
		case t[i+1][j] >= t[i][j+1]:
			i++
		default:
			j++
		}
	}
	return match
}
