package outer

import "syscall"

var errNotDir error = syscall.ENOTDIR
