package devcluster

import "syscall"

// sysProcAttr asks Linux to send a node SIGTERM if the dev cluster process
// dies without stopping it (kill -9), so no node is left behind holding its
// ports and data dir.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
