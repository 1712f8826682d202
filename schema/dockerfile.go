package schema

import (
	"slices"
	"sort"
	"strings"
)

// DockerfilePath is the image's recipe.
const DockerfilePath = "toolchain/Dockerfile"

// BaseImage is one image a build of a Dockerfile may pull, its line, and
// what pulls it (Via: FROM, COPY --from, RUN --mount, # syntax).
type BaseImage struct {
	Ref  string
	Line int
	Via  string
}

// viaSyntax is the Via of a BuildKit frontend (a syntax directive).
const viaSyntax = "# syntax"

// BaseImages lists every image a build of the Dockerfile may pull: the
// images of FROM, of --from= (COPY, and any other instruction, ONBUILD's
// too), of each RUN --mount's from=, and the frontend of a syntax
// directive. A stage named earlier (FROM … AS name, or its index) and
// scratch are no image. FROM's ARGs take their last default before the
// first FROM, as docker and podman do (asb passes no --build-arg of the
// folder's); an ARG without one stays as written, and so does any $ in a
// --from (its scope is the stage's), which no prefix of images_from matches.
//
// Builders differ on heredocs (RUN <<EOF): docker's BuildKit reads their
// lines as data, older buildah as instructions. Both readings are made,
// and an image either pulls is listed.
func BaseImages(dockerfile string) []BaseImage { return readDockerfile(dockerfile).images }

// dockerfileRead is what asb reads of a Dockerfile: its images, and what
// of it asb does not support (a Dockerfile in JSON form).
type dockerfileRead struct {
	images      []BaseImage
	unsupported []Problem
}

var (
	dockerVarRe    = lazyRegexp(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)`)
	dockerSyntaxRe = lazyRegexp(`(?i)^\s*(?:#|//)\s*syntax\s*=\s*(.*?)\s*$`)
	dockerEscapeRe = lazyRegexp(`(?i)^#\s*escape\s*=\s*(\S)\s*$`)
	dockerDirRe    = lazyRegexp(`^#\s*[a-zA-Z][a-zA-Z0-9]*\s*=`)
	heredocRe      = lazyRegexp(`^\d*<<(-?)(.+)$`)
)

func readDockerfile(src string) dockerfileRead {
	src = strings.TrimPrefix(src, "\ufeff")
	lines := strings.Split(src, "\n")
	for i := range lines {
		lines[i] = strings.TrimSuffix(lines[i], "\r")
	}
	var r dockerfileRead
	r.frontends(src, lines)
	esc := byte('\\')
	for _, l := range lines {
		if m := dockerEscapeRe().FindStringSubmatch(l); m != nil && m[1] == "`" {
			esc = '`'
		}
		if !dockerDirRe().MatchString(l) {
			break // the parser directives are the first lines
		}
	}
	type at struct {
		ref  string
		line int
	}
	seen := map[at]bool{}
	for _, heredocs := range []bool{true, false} {
		s := &dfScan{args: map[string]string{}}
		for _, ll := range logicalLines(lines, esc, heredocs) {
			s.instruction(ll, 0, false)
		}
		for _, img := range s.images {
			if !seen[at{img.Ref, img.Line}] {
				seen[at{img.Ref, img.Line}] = true
				r.images = append(r.images, img)
			}
		}
	}
	sort.SliceStable(r.images, func(i, j int) bool { return r.images[i].Line < r.images[j].Line })
	return r
}

// frontends finds a syntax directive on any line (BuildKit also reads one
// after a #! line, and as // syntax=): BuildKit pulls and runs that image
// as the frontend that reads the file. A Dockerfile in JSON form, whose
// "syntax" key BuildKit reads too, is refused: asb does not read JSON
// Dockerfiles.
func (r *dockerfileRead) frontends(src string, lines []string) {
	if strings.HasPrefix(strings.TrimSpace(src), "{") {
		r.unsupported = append(r.unsupported, Problem{File: DockerfilePath, Line: 1, Severity: SeverityError,
			Msg: "not supported by asb: a Dockerfile in JSON form, because docker's BuildKit pulls and runs the frontend image its syntax key names, which asb does not judge",
			Fix: "write toolchain/Dockerfile as Dockerfile instructions"})
	}
	for i, l := range lines {
		m := dockerSyntaxRe().FindStringSubmatch(l)
		if m == nil {
			continue
		}
		// An image like any other: images_from judges it, the grants show
		// it. (A user's own `# syntax=docker/dockerfile:1` is common.)
		r.images = append(r.images, BaseImage{Ref: m[1], Line: i + 1, Via: viaSyntax})
	}
}

// logicalLine is an instruction: its physical lines joined, and the line
// each piece of text starts on.
type logicalLine struct {
	text string
	segs []lineSeg
}

type lineSeg struct{ off, line int }

// line is the line the text at off is on.
func (l logicalLine) line(off int) int {
	n := l.segs[0].line
	for _, s := range l.segs {
		if s.off <= off {
			n = s.line
		}
	}
	return n
}

// logicalLines joins continued lines (ending in the escape character),
// skips comments and blank lines (inside a continuation too) and, when
// heredocs, the lines of RUN, COPY and ADD's heredocs.
func logicalLines(lines []string, esc byte, heredocs bool) []logicalLine {
	var out []logicalLine
	var cur logicalLine
	for i := 0; i < len(lines); i++ {
		t := strings.TrimSpace(lines[i])
		if t == "" || t[0] == '#' {
			continue
		}
		body := strings.TrimRight(lines[i], " \t")
		cont := body[len(body)-1] == esc
		if cont {
			body = body[:len(body)-1]
		}
		cur.segs = append(cur.segs, lineSeg{off: len(cur.text), line: i + 1})
		cur.text += body // no space: a word may go on past the line's end
		if cont {
			continue
		}
		out = append(out, cur)
		if heredocs {
			i = skipHeredocs(lines, i, cur.text)
		}
		cur = logicalLine{}
	}
	if cur.segs != nil {
		out = append(out, cur)
	}
	return out
}

// skipHeredocs returns the last line of the heredocs the instruction text
// (which ends on line i) opens, or i.
func skipHeredocs(lines []string, i int, text string) int {
	words := dfWords(text, 0)
	for len(words) > 0 && strings.EqualFold(words[0].s, "ONBUILD") {
		words = words[1:]
	}
	if len(words) == 0 || !slices.Contains([]string{"RUN", "COPY", "ADD"}, strings.ToUpper(words[0].s)) {
		return i
	}
	for _, w := range words[1:] {
		m := heredocRe().FindStringSubmatch(w.s)
		if m == nil {
			continue
		}
		end := unquote(m[2])
		for i++; i < len(lines); i++ {
			l := lines[i]
			if m[1] == "-" {
				l = strings.TrimLeft(l, "\t")
			}
			if l == end {
				break
			}
		}
	}
	return i
}

// unquote drops a word's quotes.
func unquote(s string) string { return strings.NewReplacer(`"`, "", `'`, "").Replace(s) }
