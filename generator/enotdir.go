package generator

import "syscall"

func syscallENOTDIR() error { return syscall.ENOTDIR }
