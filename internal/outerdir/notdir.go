package outerdir

import "syscall"

var errNotDir error = syscall.ENOTDIR
