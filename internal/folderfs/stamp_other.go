//go:build !linux && !darwin

package folderfs

import "io/fs"

// sysStamp adds nothing where asb does not know the stat layout: the
// stamp is then size, mode and modification time.
func sysStamp(fs.FileInfo, *Stamp) {}
