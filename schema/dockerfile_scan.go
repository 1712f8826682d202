package schema

import (
	"encoding/csv"
	"slices"
	"strconv"
	"strings"
)

// dfScan reads a Dockerfile's instructions in one reading (heredocs read
// as data or as instructions): the global ARGs, the stages so far, and
// the images they pull.
type dfScan struct {
	args   map[string]string // the global ARGs with a default, last one wins
	stages []string          // each stage's name, lowercase ("" unnamed), in order
	images []BaseImage
}

// dfWord is a word of an instruction and where it starts in the text.
type dfWord struct {
	s   string
	off int
}

// instruction reads the instruction of ll that starts at off; of an
// ONBUILD's (run when a stage builds on this one), only the flags count:
// builders refuse ONBUILD FROM and ONBUILD ARG sets no global.
func (s *dfScan) instruction(ll logicalLine, off int, onbuild bool) {
	words := dfWords(ll.text, off)
	if len(words) == 0 {
		return
	}
	kw, rest := strings.ToUpper(words[0].s), words[0].off+len(words[0].s)
	switch {
	case kw == "ONBUILD" && !onbuild:
		s.instruction(ll, rest, true)
	case kw == "ARG" && !onbuild && len(s.stages) == 0:
		s.globalArgs(dfWords(ll.text, rest))
	case kw == "FROM" && !onbuild:
		s.from(ll, rest)
	default:
		s.flags(ll, rest, kw)
	}
}

// globalArgs records an ARG before the first FROM: NAME=DEFAULT (its $
// filled in from the ARGs before), or a NAME without a default, which
// makes NAME unknown (builders disagree on it).
func (s *dfScan) globalArgs(words []dfWord) {
	for _, w := range words {
		name, val, ok := strings.Cut(w.s, "=")
		if !ok {
			delete(s.args, unquote(name))
			continue
		}
		s.args[unquote(name)] = s.expand(unquote(val))
	}
}

// expand fills in $NAME and ${NAME} of the global ARGs it knows; any
// other $ stays as written.
func (s *dfScan) expand(v string) string {
	return dockerVarRe().ReplaceAllStringFunc(v, func(ref string) string {
		if val, ok := s.args[strings.Trim(ref, "${}")]; ok {
			return val
		}
		return ref
	})
}

func (s *dfScan) from(ll logicalLine, off int) {
	_, rest := builderFlags(ll.text, off)
	words := dfWords(ll.text, rest)
	if len(words) == 0 {
		return
	}
	ref := s.expand(unquote(words[0].s))
	if !strings.EqualFold(ref, "scratch") && !s.isStage(ref, len(s.stages)) {
		s.images = append(s.images, BaseImage{Ref: ref, Line: ll.line(words[0].off), Via: "FROM"})
	}
	name := ""
	if len(words) >= 3 && strings.EqualFold(words[1].s, "AS") {
		name = strings.ToLower(unquote(words[2].s))
	}
	s.stages = append(s.stages, name)
}

// flags reads the flags of any other instruction: --from= (COPY's, and
// ADD's where a builder takes it) and each --mount's from=.
func (s *dfScan) flags(ll logicalLine, off int, kw string) {
	flags, _ := builderFlags(ll.text, off)
	for _, f := range flags {
		name, val, _ := strings.Cut(f.s, "=")
		switch strings.ToLower(name) {
		case "--from":
			s.fromFlag(val, ll.line(f.off), kw+" --from")
		case "--mount":
			for _, v := range mountFroms(val) {
				s.fromFlag(v, ll.line(f.off), kw+" --mount")
			}
		}
	}
}

// fromFlag adds v unless it is an earlier stage, by name or index.
func (s *dfScan) fromFlag(v string, line int, via string) {
	v = strings.TrimSpace(v)
	cur := max(len(s.stages)-1, 0)
	if n, err := strconv.Atoi(v); v == "" || s.isStage(v, cur) || err == nil && n >= 0 && n < cur {
		return
	}
	s.images = append(s.images, BaseImage{Ref: v, Line: line, Via: via})
}

// isStage reports whether v names one of the first n stages.
func (s *dfScan) isStage(v string, n int) bool {
	v = strings.ToLower(v)
	return v != "" && slices.Contains(s.stages[:n], v)
}

// mountFroms are the from= of a --mount value, read both as BuildKit does
// (CSV, any case) and as buildah does (split at commas).
func mountFroms(val string) []string {
	fields := strings.Split(val, ",")
	if rec, err := csv.NewReader(strings.NewReader(val)).Read(); err == nil {
		fields = append(fields, rec...)
	}
	var out []string
	for _, f := range fields {
		k, v, ok := strings.Cut(unquote(strings.TrimSpace(f)), "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "from") && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

func isBlank(c byte) bool { return strings.IndexByte(" \t\v\f\r", c) >= 0 }

// dfWords splits text from off at blanks outside quotes; a word keeps its
// quotes.
func dfWords(text string, off int) []dfWord {
	var out []dfWord
	for i := off; ; {
		for i < len(text) && isBlank(text[i]) {
			i++
		}
		if i >= len(text) {
			return out
		}
		start := i
		var quote byte
		for ; i < len(text) && (quote != 0 || !isBlank(text[i])); i++ {
			switch c := text[i]; {
			case c == '\\' && quote != '\'':
				i++
			case quote == 0 && (c == '"' || c == '\''):
				quote = c
			case quote != 0 && c == quote:
				quote = 0
			}
		}
		i = min(i, len(text))
		out = append(out, dfWord{s: text[start:i], off: start})
	}
}

// builderFlags reads the --flags that open an instruction's text at off,
// as the builders do (quotes dropped, \ escapes the next character, a
// lone -- ends them), and returns them and where the rest begins.
func builderFlags(text string, off int) ([]dfWord, int) {
	var flags []dfWord
	for i := off; ; {
		for i < len(text) && isBlank(text[i]) {
			i++
		}
		if !strings.HasPrefix(text[i:], "--") {
			return flags, i
		}
		start := i
		var b strings.Builder
		var quote byte
		for ; i < len(text) && (quote != 0 || !isBlank(text[i])); i++ {
			switch c := text[i]; {
			case c == '\\':
				if i+1 < len(text) {
					i++
					b.WriteByte(text[i])
				}
			case quote == 0 && (c == '"' || c == '\''):
				quote = c
			case quote != 0 && c == quote:
				quote = 0
			default:
				b.WriteByte(c)
			}
		}
		if b.String() == "--" {
			return flags, i
		}
		flags = append(flags, dfWord{s: b.String(), off: start})
	}
}
