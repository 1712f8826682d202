package initcmd

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// copyFolder copies the plain folder src (one the user typed: --workspace
// of a folder that is not a git checkout) to dst, which must not exist:
// folders, regular files with their modes, and links as links (never
// followed). Anything else (a socket, a device) is left out and named.
func copyFolder(src, dst string) (skipped []string, err error) {
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch m := fi.Mode(); {
		case m.IsDir():
			return os.Mkdir(to, m.Perm()|0o700)
		case m.IsRegular():
			return copyFile(p, to, m.Perm())
		case m&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		default:
			skipped = append(skipped, rel)
			return nil
		}
	})
	if err != nil {
		return skipped, fmt.Errorf("copy %s: %w", src, err)
	}
	return skipped, nil
}

func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm|0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
