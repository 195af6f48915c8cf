package logdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockFileName is the lock Kafka takes in every log dir, so two processes
// never run on one directory.
const lockFileName = ".lock"

// Locks holds an exclusive flock on each log dir's .lock file. The lock
// is an operating-system resource, not storage data, so it bypasses vfs.
type Locks struct {
	files []*os.File
}

// Lock takes an exclusive flock on each directory's .lock file, creating
// the directory when missing.
func Lock(dirs []string) (*Locks, error) {
	l := &Locks{}
	for _, dir := range dirs {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			l.Release()
			return nil, fmt.Errorf("create log dir: %w", err) // names the dir
		}
		path := filepath.Join(dir, lockFileName)
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			l.Release()
			return nil, fmt.Errorf("lock log dir: %w", err) // names the file
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			l.Release()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, fmt.Errorf("log dir %s is in use by another process (%s is locked)", dir, path)
			}
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		l.files = append(l.files, f)
	}
	return l, nil
}

// Release drops every lock.
func (l *Locks) Release() {
	for _, f := range l.files {
		f.Close() // closing the descriptor drops the flock
	}
	l.files = nil
}
