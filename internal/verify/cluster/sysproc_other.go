//go:build !linux

package cluster

import "syscall"

// sysProcAttr is empty where Pdeathsig does not exist: nodes outlive a
// killed sluice verify there.
func sysProcAttr() *syscall.SysProcAttr { return nil }
