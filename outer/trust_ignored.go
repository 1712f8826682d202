package outer

import (
	"bytes"
	"path"
	"regexp"
	"strings"
	"sync"

	"github.com/agents-sandbox/asb/internal/folderfs"
)

// Scratch files. A file at the folder's top that git does not track, that
// the folder's .gitignore ignores and that nothing reads (no file of the
// trust set names it, and it is none of the names asb, go-task or msb read
// by themselves) is not in the trust set: a clone or a pull never brings
// such a file (git writes only tracked files), so only this machine's
// user put it there, and nothing runs it. notes.txt, a command's output
// or a merge's *.orig can then sit beside the Taskfile without making the
// folder "not approved". Where asb cannot know what git tracks (no
// repository, an index it cannot read: trackedOf) every file counts.

// readByName are top-level names a tool reads without being told.
var readByName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^(taskfile(\.dist)?\.ya?ml|\.taskrc\.ya?ml|sandbox\.yaml|secrets\.yaml)$`)
})

// dropIgnored takes the scratch files out of the set.
func (s *TrustSet) dropIgnored(root *folderfs.Root, st *stamps) error {
	t, repo, why := trackedOf(root.Dir())
	if t != nil && t.Index != "" {
		st.putAbs(t.Index, t.Stamp)
		st.tracked = t
	}
	if why != "" || repo.Pointer || repo.Prefix != "" {
		st.add(".git") // a repository made, or a pointer changed, later changes what counts
	}
	if why != "" {
		s.untracked = why
		return nil // no record of what git wrote: every file counts
	}
	raw, err := root.ReadFile(".gitignore", 1<<20)
	st.add(".gitignore")
	if err != nil {
		return nil //nolint:nilerr // nothing ignored
	}
	trustReads.Add(1)
	rules := parseIgnore(raw)
	for name := range s.Files {
		if strings.Contains(name, "/") || t.TopTracked(name) || readByName().MatchString(name) || !rules.ignores(name) || s.named(name) {
			continue
		}
		delete(s.Files, name)
	}
	return nil
}

// named reports whether another file of the set holds name.
func (s *TrustSet) named(name string) bool {
	for other, b := range s.Files {
		if other != name && bytes.Contains(b, []byte(name)) {
			return true
		}
	}
	return false
}

// ignoreRule is one line of a .gitignore, as it applies to a file at the
// top of the repository.
type ignoreRule struct {
	pattern string
	negate  bool
}

type ignoreRules []ignoreRule

// parseIgnore reads the lines of .gitignore that can match a file at the
// top: a pattern without a slash, or one anchored at the top (/name,
// **/name); a folder's pattern (ending in /) never matches a file.
func parseIgnore(raw []byte) ignoreRules {
	var out ignoreRules
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimRight(line, "\r")
		if !strings.HasSuffix(line, `\ `) {
			line = strings.TrimRight(line, " ")
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r := ignoreRule{}
		if strings.HasPrefix(line, "!") {
			r.negate, line = true, line[1:]
		}
		line = strings.TrimPrefix(line, `\`)
		if strings.HasSuffix(line, "/") {
			continue
		}
		line = strings.TrimPrefix(line, "**/")
		line = strings.TrimPrefix(line, "/")
		if strings.Contains(line, "/") {
			continue
		}
		r.pattern = strings.ReplaceAll(line, `\ `, " ")
		out = append(out, r)
	}
	return out
}

// ignores reports whether the last rule that matches name ignores it.
func (rs ignoreRules) ignores(name string) bool {
	ignored := false
	for _, r := range rs {
		if ok, _ := path.Match(strings.ReplaceAll(r.pattern, "**", "*"), name); ok {
			ignored = !r.negate
		}
	}
	return ignored
}
