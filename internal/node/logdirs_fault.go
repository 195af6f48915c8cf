//go:build sluicefault

package node

import (
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/sluice-io/sluice/internal/vfs"
)

// Fault tests only (a binary built with -tags sluicefault; release builds
// never have it): SLUICE_FAULT_LOG_DIR names a log dir whose every file
// operation fails with EIO, as a dying disk's, from the moment the file
// "<dir>.fail" exists; the check runs at most every 50 ms. A real process
// thus loses one log dir while its others stay healthy, which a removed
// permission cannot do for root and a loop device needs privileges for.
func faultFS(fsys vfs.FS, logger *slog.Logger) vfs.FS {
	dir := os.Getenv("SLUICE_FAULT_LOG_DIR")
	if dir == "" {
		return fsys
	}
	dir = filepath.Clean(dir)
	logger.Warn("fault injection build: the log dir fails when its trigger file appears", "dir", dir, "trigger", dir+".fail")
	under := vfs.UnderDir(dir)
	var mu sync.Mutex
	var checked time.Time
	failed := false
	broken := func() bool {
		mu.Lock()
		defer mu.Unlock()
		if !failed && time.Since(checked) > 50*time.Millisecond {
			checked = time.Now()
			if _, err := os.Stat(dir + ".fail"); err == nil {
				failed = true
				logger.Warn("fault injection: the log dir fails from now on", "dir", dir)
			}
		}
		return failed
	}
	return vfs.NewErrorFS(fsys, vfs.InjectorFunc(func(_ vfs.Op, path string, _ int) error {
		if under(path) && broken() {
			return syscall.EIO
		}
		return nil
	}))
}
