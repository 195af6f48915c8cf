//go:build !linux

package devcluster

import "syscall"

// sysProcAttr: only Linux has a parent-death signal; elsewhere a dev
// cluster killed with kill -9 leaves its nodes running.
func sysProcAttr() *syscall.SysProcAttr { return nil }
