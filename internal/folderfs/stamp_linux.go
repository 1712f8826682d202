package folderfs

import (
	"io/fs"
	"syscall"
)

func sysStamp(fi fs.FileInfo, s *Stamp) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.Dev, s.Ino = st.Dev, st.Ino
		s.ChangNs = st.Ctim.Sec*1e9 + st.Ctim.Nsec
	}
}
