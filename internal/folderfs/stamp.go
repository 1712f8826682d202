package folderfs

import (
	"errors"
	"io/fs"
	"os"
)

// Stamp is a file's identity without its content: device, inode, size,
// modification and change times in nanoseconds, and type. A write to the
// file, a rename over it or a chmod changes it (the change time moves with
// any of them, and no user can set it back), so an unchanged stamp is an
// unchanged file. A missing file has the zero Stamp with Missing set.
type Stamp struct {
	Dev     uint64 `json:"dev,omitempty"`
	Ino     uint64 `json:"ino,omitempty"`
	Size    int64  `json:"size,omitempty"`
	ModNs   int64  `json:"mtime,omitempty"`
	ChangNs int64  `json:"ctime,omitempty"`
	Mode    uint32 `json:"mode,omitempty"`
	Missing bool   `json:"missing,omitempty"`
}

// StampPath stamps path without following a last link. Only "it does not
// exist" is a stamp (Missing); any other failure is an error.
func StampPath(path string) (Stamp, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Stamp{Missing: true}, nil
	}
	if err != nil {
		return Stamp{}, err
	}
	return StampOf(fi), nil
}

// StampOf is the stamp of what fi describes.
func StampOf(fi fs.FileInfo) Stamp {
	s := Stamp{Size: fi.Size(), ModNs: fi.ModTime().UnixNano(), Mode: uint32(fi.Mode())}
	sysStamp(fi, &s)
	return s
}

// Since reports whether the file changed at or after ns (UnixNano): its
// stamp may then not tell a later write of the same size from this one,
// as a file system's clock ticks coarser than nanoseconds (git's "racy"
// entries).
func (s Stamp) Since(ns int64) bool { return s.ModNs >= ns || s.ChangNs >= ns }
