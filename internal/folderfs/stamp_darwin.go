package folderfs

import (
	"io/fs"
	"syscall"
)

func sysStamp(fi fs.FileInfo, s *Stamp) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.Dev, s.Ino = uint64(st.Dev), st.Ino
		s.ChangNs = st.Ctimespec.Sec*1e9 + st.Ctimespec.Nsec
	}
}
