package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/agents-sandbox/asb/internal/folderfs"
	"github.com/agents-sandbox/asb/schema"
)

// RunLockPath is the lock `asb task` holds while it changes this clone's
// VM, image or volumes (relative to the outer folder, git-ignored).
const RunLockPath = ".asb/run.lock"

// Lock is an exclusive flock(2) on a file. The kernel drops it when the
// holder exits, however it exits (kill -9 included): there is never a stale
// lock to clean up.
type Lock struct {
	f *os.File
}

// AcquireLock takes the lock at path (creating the file and its folder),
// waiting as long as another process holds it and ctx allows. The first
// time it has to wait it calls waiting with what the holder wrote (its pid
// and command). Once held, it records holder in the file.
//
// The lock file is truncated and written: a link at its name is never
// followed (it would empty the file it names), and a file another user
// made is refused. (A folder's lock is in this user's own folder,
// lockDir, where no one else can plant either.)
func AcquireLock(ctx context.Context, path, holder string, waiting func(holder string)) (*Lock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w (a link or a file of another user there is refused: remove it)", path, err)
	}
	if err := ownLockFile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w; remove it", path, err)
	}
	return lockFile(ctx, f, path, holder, waiting)
}

// ownLockFile refuses a lock file that is not a regular file of this user.
func ownLockFile(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("not a regular file")
	}
	if uid, other := otherOwner(fi); other {
		return fmt.Errorf("owned by another user (uid %d)", uid)
	}
	return nil
}

// otherOwner reports the owner of fi when it is not this process's user.
func otherOwner(fi fs.FileInfo) (uint32, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false // no owner to tell (not Linux or macOS)
	}
	return st.Uid, int(st.Uid) != os.Geteuid()
}

// AcquireFolderLock is AcquireLock on the file rel of the outer folder dir
// (the run lock, the state lock), opened through the folder's confined
// root: a committed .asb link out of the folder is refused.
func AcquireFolderLock(ctx context.Context, dir, rel, holder string, waiting func(holder string)) (*Lock, error) {
	f, err := OpenInFolder(dir, rel, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", rel, err)
	}
	return lockFile(ctx, f, rel, holder, waiting)
}

// OpenInFolder opens (creating, with its folder) the lock file rel of the
// outer folder dir through its confined root.
func OpenInFolder(dir, rel string, flag int) (*os.File, error) {
	root, err := folderfs.Open(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	if err := root.MkdirAll(path.Dir(rel), 0o755); err != nil {
		return nil, folderfs.Explain(rel, err)
	}
	f, err := root.OpenFile(rel, flag, 0o644)
	return f, folderfs.Explain(rel, err)
}

// lockFile takes the flock of f (named path in messages), as AcquireLock.
func lockFile(ctx context.Context, f *os.File, path, holder string, waiting func(holder string)) (*Lock, error) {
	told := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if !told && waiting != nil {
			told = true
			waiting(readHolder(f))
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("interrupted while waiting for %s: %w", path, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(holder+"\n"), 0)
	}
	return &Lock{f: f}, nil
}

func readHolder(f *os.File) string {
	b, _ := io.ReadAll(io.NewSectionReader(f, 0, 4096))
	if h := strings.TrimSpace(string(b)); h != "" {
		return h
	}
	return "another process"
}

// Release drops the lock; it is safe to call twice.
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	_ = l.f.Close()
	l.f = nil
}

// Holder describes this process for a lock: "pid 123: asb task agent,
// since 10:42:07".
func Holder(what string, now time.Time) string {
	return fmt.Sprintf("pid %d: %s, since %s", os.Getpid(), what, now.Format("15:04:05"))
}

// FolderLockPath is the lock of the outer folder dir (init, re-init and
// the edit commands hold it while they read and write the folder's
// files). It lives in this user's folder of the temporary folder
// (lockDir), keyed by dir's resolved path: it exists before dir does (two
// inits into one new folder), and no undo of a failed init can delete it
// from under a run that waits for it.
func FolderLockPath(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	sum := sha256.Sum256([]byte(schema.ResolvePath(filepath.Clean(abs))))
	return filepath.Join(lockDir(), "folder-"+hex.EncodeToString(sum[:10])+".lock")
}

// lockDir is this user's folder of folder locks, asb-UID in the temporary
// folder, as tmux keeps its sockets: in the shared /tmp a lock's name is
// one any local user can compute, and a file or a link planted there
// would block asb or, followed, have it empty the file the link names.
func lockDir() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("asb-%d", os.Geteuid()))
}

// ensureLockDir makes lockDir (0700) and refuses one that is a link, not a
// folder, or another user's; one of this user's that others may write is
// made private again.
func ensureLockDir() error {
	d := lockDir()
	if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("the folder of asb's locks %s: %w", d, err)
	}
	fi, err := os.Lstat(d)
	if err != nil {
		return fmt.Errorf("the folder of asb's locks %s: %w", d, err)
	}
	uid, other := otherOwner(fi)
	switch {
	case !fi.IsDir():
		return fmt.Errorf("the folder of asb's locks %s is a link or a file, not a folder: remove it", d)
	case other:
		return fmt.Errorf("the folder of asb's locks %s belongs to another user (uid %d): remove it, or set TMPDIR to a folder of your own", d, uid)
	case fi.Mode().Perm()&0o077 != 0:
		if err := os.Chmod(d, 0o700); err != nil {
			return fmt.Errorf("the folder of asb's locks %s: %w", d, err)
		}
	}
	return nil
}

// LockFolder takes FolderLockPath(dir), saying on w when it waits.
func LockFolder(ctx context.Context, dir, what string, w io.Writer) (*Lock, error) {
	return acquireFolderLock(ctx, dir, what, func(holder string) {
		fmt.Fprintf(w, "asb: waiting for another asb changing %s (%s)…\n", dir, holder)
	})
}

// acquireFolderLock is AcquireLock of FolderLockPath(dir), in lockDir made
// (or checked) first.
func acquireFolderLock(ctx context.Context, dir, what string, waiting func(holder string)) (*Lock, error) {
	if err := ensureLockDir(); err != nil {
		return nil, err
	}
	return AcquireLock(ctx, FolderLockPath(dir), Holder(what, time.Now()), waiting)
}

// TryLockFolder takes FolderLockPath(dir) if no other process holds it,
// and returns nil (no error) if one does.
func TryLockFolder(dir, what string) (*Lock, error) {
	ctx, cancel := context.WithCancel(context.Background())
	l, err := acquireFolderLock(ctx, dir, what, func(string) { cancel() })
	cancel()
	if err != nil && errors.Is(err, context.Canceled) {
		return nil, nil
	}
	return l, err
}
