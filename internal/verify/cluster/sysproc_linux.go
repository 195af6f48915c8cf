package cluster

import "syscall"

// sysProcAttr asks Linux to kill a node if the process that started it
// dies without stopping it (kill -9 of sluice verify), so no node is left
// behind holding its ports; its own process group keeps a terminal's ^C
// (sent to the foreground group) from reaching the nodes before Close
// stops them in order.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}
