// Package vfs puts every file access of Sluice's storage behind a small
// interface, so tests can substitute an in-memory file system that simulates
// a crash (dropping unsynced writes) or injects I/O errors.
//
// Files are written and read at explicit positions only: no file shares a
// cursor between goroutines, so concurrent readers (and sendfile) are safe.
// Metadata changes (create, rename, remove) are durable only after SyncDir on
// the parent directory, as on a real POSIX file system.
package vfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// File is an open file.
type File interface {
	io.ReaderAt
	io.WriterAt
	io.Closer
	// Sync makes the file's contents durable (fdatasync semantics).
	Sync() error
	// Truncate changes the file's size.
	Truncate(size int64) error
	// Size returns the file's current size.
	Size() (int64, error)
}

// OSFile is implemented by files backed by an operating-system file, so the
// network layer can sendfile from them.
type OSFile interface {
	OS() *os.File
}

// FS is a file system.
type FS interface {
	// Create creates or truncates the named file, open for reading and writing.
	Create(name string) (File, error)
	// OpenReadWrite opens the named file for reading and writing, creating it if absent.
	OpenReadWrite(name string) (File, error)
	// Open opens the named file read-only.
	Open(name string) (File, error)
	// Remove removes a file or an empty directory.
	Remove(name string) error
	// RemoveAll removes a path and everything below it.
	RemoveAll(name string) error
	// Rename renames oldname to newname, replacing newname if it exists.
	Rename(oldname, newname string) error
	// MkdirAll creates a directory and its parents.
	MkdirAll(dir string, perm os.FileMode) error
	// List returns the names of the entries in dir, sorted.
	List(dir string) ([]string, error)
	// Stat describes the named file.
	Stat(name string) (os.FileInfo, error)
	// SyncDir makes the directory's entries (creates, renames, removes) durable.
	SyncDir(dir string) error
}

// Default is the operating system's file system.
var Default FS = osFS{}

type osFS struct{}

type osFile struct{ *os.File }

func (f osFile) OS() *os.File { return f.File }

func (f osFile) Size() (int64, error) {
	st, err := f.File.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

func (osFS) Create(name string) (File, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (osFS) OpenReadWrite(name string) (File, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (osFS) Open(name string) (File, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (osFS) Remove(name string) error                    { return os.Remove(name) }
func (osFS) RemoveAll(name string) error                 { return os.RemoveAll(name) }
func (osFS) Rename(o, n string) error                    { return os.Rename(o, n) }
func (osFS) MkdirAll(dir string, perm os.FileMode) error { return os.MkdirAll(dir, perm) }
func (osFS) Stat(name string) (os.FileInfo, error)       { return os.Stat(name) }

func (osFS) List(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names, nil
}

func (osFS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return err
	}
	return d.Close()
}

// TempSuffix is what WriteFileAtomic and WriteFileRenamed append to the
// temporary file they rename into place (start-up clean-ups look for it).
const TempSuffix = ".tmp"

// WriteFileAtomic writes data to name through a temporary file, an fsync and a
// rename, then syncs the directory: after a crash the file holds either its
// old or its new contents, never a mix. Kafka writes its checkpoint files so.
func WriteFileAtomic(fsys FS, name string, data []byte) error {
	if err := writeRenamed(fsys, name, data, true); err != nil {
		return err
	}
	return fsys.SyncDir(filepath.Dir(name))
}

// WriteFileRenamed is WriteFileAtomic without the fsyncs: name never holds a
// partial write while the process runs, and the caller syncs the file and
// its directory later (a roll's producer snapshot, synced by the flusher).
func WriteFileRenamed(fsys FS, name string, data []byte) error {
	return writeRenamed(fsys, name, data, false)
}

func writeRenamed(fsys FS, name string, data []byte, sync bool) error {
	tmp := name + TempSuffix
	f, err := fsys.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		f.Close()
		return err
	}
	if sync {
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	return fsys.Rename(tmp, name)
}

// ReadFile reads a whole file.
func ReadFile(fsys FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, size)
	n, err := f.ReadAt(buf, 0)
	if err != nil && err != io.EOF {
		return nil, err
	}
	return buf[:n], nil
}

// IsNotExist reports whether err says a file does not exist.
func IsNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
