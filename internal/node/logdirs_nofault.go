//go:build !sluicefault

package node

import (
	"log/slog"

	"github.com/sluice-io/sluice/internal/vfs"
)

// faultFS is the file system as it is: fault injection exists only in
// binaries built with -tags sluicefault (logdirs_fault.go).
func faultFS(fsys vfs.FS, _ *slog.Logger) vfs.FS { return fsys }
