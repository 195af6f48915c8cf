//go:build !sluicebug

package replication

import "github.com/sluice-io/sluice/internal/commitlog"

// The planted bugs `sluice verify`'s tests must find exist only in binaries
// built with -tags sluicebug (bug_sluicebug.go). Here every hook is the
// identity: each inlines to nothing on the produce path.

// bugDropAcked never drops: the append goes ahead.
func bugDropAcked(*Partition, []byte, *commitlog.AppendInfo) bool { return false }

// bugDuplicate writes nothing more.
func bugDuplicate(*Partition, []byte) {}

// bugISR is the ISR the high watermark waits for, unchanged.
func bugISR(isr []int32) []int32 { return isr }
