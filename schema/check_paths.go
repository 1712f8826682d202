package schema

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// resolvePath resolves the symlinks of the longest existing prefix of p (an
// absolute, clean path) and appends the rest.
func resolvePath(p string) string {
	rest := ""
	for cur := p; ; cur = filepath.Dir(cur) {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		if filepath.Dir(cur) == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
	}
}

func (c *checker) hostPath(p string) string {
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		if c.home == "" {
			return ""
		}
		p = filepath.Join(c.home, strings.TrimPrefix(p, "~"))
	case !filepath.IsAbs(p):
		p = filepath.Join(c.dir, p)
	}
	return resolvePath(filepath.Clean(p))
}

func (c *checker) rel(p string) string {
	if r, err := filepath.Rel(c.dir, p); err == nil && !strings.HasPrefix(r, "..") {
		return "./" + filepath.ToSlash(r)
	}
	return p
}

// secretFileIn finds a file named secrets.env or secrets.yaml at or below p.
// It looks at most limit entries deep, skipping .git and node_modules.
func secretFileIn(p string) string {
	fi, err := os.Stat(p)
	if err != nil {
		return ""
	}
	isSecret := func(name string) bool { return name == SecretsEnvFile || name == SecretsFile }
	if !fi.IsDir() {
		if isSecret(filepath.Base(p)) {
			return p
		}
		return ""
	}
	const limit = 50000
	seen, found := 0, ""
	_ = filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil //nolint:nilerr // unreadable entries cannot leak either
		}
		if seen++; seen > limit {
			return filepath.SkipAll
		}
		if d.IsDir() && q != p && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && isSecret(d.Name()) {
			found = q
			return filepath.SkipAll
		}
		return nil
	})
	return found
}

// lexicalPath is p made absolute as hostPath does, with no link followed.
func (c *checker) lexicalPath(p string) string {
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		if c.home == "" {
			return ""
		}
		return filepath.Join(c.home, strings.TrimPrefix(p, "~"))
	case !filepath.IsAbs(p):
		return filepath.Join(c.dir, p)
	}
	return filepath.Clean(p)
}
