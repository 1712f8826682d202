package runner

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"regexp"
	"strings"
	"sync"
	"syscall"

	"github.com/agents-sandbox/asb/internal/folderfs"
)

// A repository the VM can write is fetched from a staged copy, never from
// its own .git: the VM runs alongside asb, so a link or an alternates file
// it puts in .git after the shape check would steer a git reading it there
// to another repository of the host. The copy is made through an os.Root
// of that .git, so nothing read for it comes from outside it, whatever the
// VM does meanwhile. Only what a fetch needs is copied, as data: HEAD, the
// refs, packed-refs, shallow, loose objects and packs; never config, hooks,
// info/ or alternates. The staged repository's own config is asb's. A pack
// or object already staged (same name and size) is not copied again: their
// names are their contents' hashes, and the fetch checks every object it
// takes (fetch.fsckObjects).

// stageConfig is the config of every staged copy.
const stageConfig = "# asb's staged copy of a repository the VM writes (docs/vm-repositories.md); asb writes this file.\n[core]\n\trepositoryformatversion = 0\n\tbare = true\n"

var (
	looseDirRe  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{2}$`) })
	looseFileRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([0-9a-f]{38}|[0-9a-f]{62})$`) })
	packFileRe  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^pack-([0-9a-f]{40}|[0-9a-f]{64})\.(pack|idx|rev)$`) })
)

// maxRefs bounds the loose refs asb copies from one repository.
const maxRefs = 100000

// staged is what a staged copy holds: HEAD as read, and its refs with the
// objects they name.
type staged struct {
	head    Head
	headErr error
	refs    map[string]string
}

// has reports whether the copy has ref (a full name), or HEAD resolves.
func (s *staged) has(ref string) bool {
	if ref == "HEAD" {
		return s.headErr == nil && (s.head.Commit != "" || s.refs[s.head.Ref] != "")
	}
	return s.refs[ref] != ""
}

// stage copies what a fetch needs of src (the .git of a repository the VM
// writes) into dst (a folder of asb's).
func stage(src, dst *os.Root) (*staged, error) {
	for _, d := range []string{"objects/pack", "refs"} {
		if err := dst.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	if err := writeReplace(dst, "config", []byte(stageConfig)); err != nil {
		return nil, err
	}
	st := &staged{refs: map[string]string{}}
	if err := stageRefs(src, dst, st); err != nil {
		return nil, err
	}
	st.head, st.headErr = ReadHead(src)
	head := "ref: refs/heads/asb-no-head\n"
	if st.headErr == nil {
		head = "ref: " + st.head.Ref + "\n"
		if st.head.Commit != "" {
			head = st.head.Commit + "\n"
		}
	}
	if err := writeReplace(dst, "HEAD", []byte(head)); err != nil {
		return nil, err
	}
	if err := stageObjects(src, dst); err != nil {
		return nil, err
	}
	return st, nil
}

// stageRefs replaces dst's refs with src's loose refs whose names and
// contents have a ref's form, and its packed-refs and shallow files.
func stageRefs(src, dst *os.Root, st *staged) error {
	if err := dst.RemoveAll("refs"); err != nil {
		return err
	}
	if err := dst.Mkdir("refs", 0o755); err != nil {
		return err
	}
	n := 0
	err := fs.WalkDir(folderfs.NoBlockFS(src), "refs", func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && tooDeep(p) {
			return fs.SkipDir // no ref below
		}
		if err != nil || !d.Type().IsRegular() || !ValidRefName(p) {
			return err
		}
		if n++; n > maxRefs {
			return fmt.Errorf("more than %d refs", maxRefs)
		}
		raw, err := readSmall(src, p, maxRefFile)
		if err != nil || !hashRe().Match(bytes.TrimSpace(raw)) {
			return nil //nolint:nilerr // not a ref's content: left out
		}
		if err := dst.MkdirAll(path.Dir(p), 0o755); err != nil {
			return err
		}
		st.refs[p] = string(bytes.TrimSpace(raw))
		return dst.WriteFile(p, raw, 0o644)
	})
	if err != nil {
		return fmt.Errorf("refs: %w", err)
	}
	for _, name := range []string{"packed-refs", "shallow"} {
		raw, err := readSmall(src, name, maxPackedRefs)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := dst.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			continue
		case err != nil:
			return fmt.Errorf("%s: %w", name, err)
		}
		if name == "packed-refs" {
			packedNames(raw, st.refs)
		}
		if err := writeReplace(dst, name, raw); err != nil {
			return err
		}
	}
	return nil
}

// packedNames adds the refs of a packed-refs file's content to refs (a
// loose ref wins, as in git).
func packedNames(raw []byte, refs map[string]string) {
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		if hash, name, ok := strings.Cut(sc.Text(), " "); ok && hashRe().MatchString(hash) && ValidRefName(name) && refs[name] == "" {
			refs[name] = hash
		}
	}
}

// stageObjects copies src's loose objects and packs that dst lacks, and
// removes dst's packs that src no longer has.
func stageObjects(src, dst *os.Root) error {
	dirs, err := fs.ReadDir(folderfs.NoBlockFS(src), "objects")
	if err != nil {
		return fmt.Errorf("objects: %w", err)
	}
	for _, d := range dirs {
		if d.IsDir() && looseDirRe().MatchString(d.Name()) {
			if err := stageDir(src, dst, "objects/"+d.Name(), looseFileRe()); err != nil {
				return err
			}
		}
	}
	return stageDir(src, dst, "objects/pack", packFileRe())
}

// stageDir copies the plain files of src's folder dir whose names match re
// into dst's, unless dst has one of that name and size already.
func stageDir(src, dst *os.Root, dir string, re *regexp.Regexp) error {
	ents, err := fs.ReadDir(folderfs.NoBlockFS(src), dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	if err := dst.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	keep := map[string]bool{}
	// A file of src under several names (hard links) is copied once and
	// linked to the others: the copy costs the host what src costs it.
	copied := map[[2]uint64]string{}
	for _, e := range ents {
		if !e.Type().IsRegular() || !re.MatchString(e.Name()) {
			continue
		}
		p := dir + "/" + e.Name()
		keep[e.Name()] = true
		fi, err := e.Info()
		if err != nil {
			continue // gone meanwhile
		}
		id := folderfs.StampOf(fi)
		if have, err := dst.Lstat(p); err == nil && have.Size() == fi.Size() {
			if id.Ino != 0 {
				copied[[2]uint64{id.Dev, id.Ino}] = p
			}
			continue
		}
		if first, ok := copied[[2]uint64{id.Dev, id.Ino}]; ok && id.Ino != 0 {
			if err := linkReplace(dst, first, p); err == nil {
				continue
			}
		}
		if err := copyFile(src, dst, p); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if id.Ino != 0 {
			copied[[2]uint64{id.Dev, id.Ino}] = p
		}
	}
	if dir != "objects/pack" {
		return nil
	}
	old, _ := fs.ReadDir(dst.FS(), dir)
	for _, e := range old {
		if !keep[e.Name()] {
			_ = dst.Remove(dir + "/" + e.Name())
		}
	}
	return nil
}

// copyFile copies p of src to p of dst, through a new file renamed into
// place (a copy cut short leaves no file of the final name).
func copyFile(src, dst *os.Root, p string) error {
	in, err := folderfs.OpenNoBlock(src, p) // not waiting on a FIFO put there since ReadDir
	if err != nil {
		return err
	}
	defer in.Close()
	if fi, err := in.Stat(); err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("not a plain file")
	}
	out, tmp, err := createTemp(dst, path.Dir(p))
	if err != nil {
		return err
	}
	err = copySparse(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = dst.Rename(tmp, p)
	}
	if err != nil {
		_ = dst.Remove(tmp)
	}
	return err
}

// copySparse copies in to out, keeping its holes holes: a file the VM
// made sparse (truncate -s 10T) costs it no block, and must cost the host
// none either. Where holes cannot be found, every byte is copied.
func copySparse(out, in *os.File) error {
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	size := fi.Size()
	if seekData < 0 {
		_, err := io.Copy(out, in)
		return err
	}
	for off := int64(0); off < size; {
		data, err := in.Seek(off, seekData)
		if errors.Is(err, syscall.ENXIO) {
			break // a hole to the end
		}
		if err != nil {
			// A file system that cannot say where the data is: every byte
			// from here, never zeros in the data's place.
			if _, err := in.Seek(off, io.SeekStart); err != nil {
				return err
			}
			if _, err := out.Seek(off, io.SeekStart); err != nil {
				return err
			}
			_, err = io.Copy(out, in)
			return err
		}
		hole, err := in.Seek(data, seekHole)
		if err != nil {
			return err
		}
		hole = min(hole, size)
		if hole <= data {
			break
		}
		if _, err := in.Seek(data, io.SeekStart); err != nil {
			return err
		}
		if _, err := out.Seek(data, io.SeekStart); err != nil {
			return err
		}
		if _, err := io.CopyN(out, in, hole-data); err != nil {
			return err
		}
		off = hole
	}
	return out.Truncate(size)
}

// linkReplace makes name of dst another name of the file from, through a
// new link renamed into place.
func linkReplace(dst *os.Root, from, name string) error {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	tmp := path.Join(path.Dir(name), "tmp-asb-"+hex.EncodeToString(b[:]))
	if err := dst.Link(from, tmp); err != nil {
		return err
	}
	if err := dst.Rename(tmp, name); err != nil {
		_ = dst.Remove(tmp)
		return err
	}
	return nil
}

// writeReplace writes data as name of dst, through a new file renamed into
// place.
func writeReplace(dst *os.Root, name string, data []byte) error {
	if old, err := readSmall(dst, name, int64(len(data))); err == nil && bytes.Equal(old, data) {
		return nil
	}
	out, tmp, err := createTemp(dst, path.Dir(name))
	if err != nil {
		return err
	}
	_, err = out.Write(data)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = dst.Rename(tmp, name)
	}
	if err != nil {
		_ = dst.Remove(tmp)
	}
	return err
}

// createTemp makes a new file in dir of root for a copy.
func createTemp(root *os.Root, dir string) (*os.File, string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, "", err
	}
	tmp := path.Join(dir, "tmp-asb-"+hex.EncodeToString(b[:]))
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	return f, tmp, err
}
