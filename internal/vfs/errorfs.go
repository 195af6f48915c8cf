package vfs

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

// Op names an operation ErrorFS can fail.
type Op int

// The operations of FS and File.
const (
	OpCreate Op = iota
	OpOpenReadWrite
	OpOpen
	OpRemove
	OpRemoveAll
	OpRename
	OpMkdirAll
	OpList
	OpStat
	OpSyncDir
	OpRead
	OpWrite
	OpSync
	OpTruncate
	OpSize
	OpClose
)

func (o Op) String() string {
	switch o {
	case OpCreate:
		return "create"
	case OpOpenReadWrite:
		return "openrw"
	case OpOpen:
		return "open"
	case OpRemove:
		return "remove"
	case OpRemoveAll:
		return "removeall"
	case OpRename:
		return "rename"
	case OpMkdirAll:
		return "mkdirall"
	case OpList:
		return "list"
	case OpStat:
		return "stat"
	case OpSyncDir:
		return "syncdir"
	case OpRead:
		return "read"
	case OpWrite:
		return "write"
	case OpSync:
		return "sync"
	case OpTruncate:
		return "truncate"
	case OpSize:
		return "size"
	case OpClose:
		return "close"
	}
	return "op?"
}

// Injector decides which operations ErrorFS fails. It must be safe for
// concurrent use.
type Injector interface {
	// MaybeError returns the error that op on path fails with, or nil to let
	// it through. n is the byte count of an OpWrite, 0 otherwise. Rename
	// asks once for each of its two paths.
	MaybeError(op Op, path string, n int) error
}

// InjectorFunc adapts a function to Injector.
type InjectorFunc func(op Op, path string, n int) error

// MaybeError calls fn.
func (fn InjectorFunc) MaybeError(op Op, path string, n int) error { return fn(op, path, n) }

// ErrorFS wraps an FS and fails the operations its Injector picks, before
// they reach the inner FS. The injector can be swapped at run time, so a
// test can let a component start cleanly and then break its disk.
//
// Files opened through ErrorFS do not expose OSFile even over the OS file
// system: a sendfile would bypass the injection.
type ErrorFS struct {
	inner FS
	inj   atomic.Pointer[injectorBox]
}

// injectorBox lets an interface value live in an atomic.Pointer.
type injectorBox struct{ Injector }

// NewErrorFS wraps inner, failing what inj picks (nil picks nothing).
func NewErrorFS(inner FS, inj Injector) *ErrorFS {
	e := &ErrorFS{inner: inner}
	e.SetInjector(inj)
	return e
}

// SetInjector replaces the injector; nil stops all injection.
func (e *ErrorFS) SetInjector(inj Injector) {
	if inj == nil {
		e.inj.Store(nil)
		return
	}
	e.inj.Store(&injectorBox{inj})
}

func (e *ErrorFS) check(op Op, path string, n int) error {
	box := e.inj.Load()
	if box == nil {
		return nil
	}
	if err := box.MaybeError(op, path, n); err != nil {
		return &fs.PathError{Op: op.String(), Path: path, Err: err}
	}
	return nil
}

var _ FS = (*ErrorFS)(nil)

func (e *ErrorFS) wrap(name string, f File, err error) (File, error) {
	if err != nil {
		return nil, err
	}
	return &errorFile{fs: e, inner: f, name: name}, nil
}

// Create creates or truncates the named file.
func (e *ErrorFS) Create(name string) (File, error) {
	if err := e.check(OpCreate, name, 0); err != nil {
		return nil, err
	}
	f, err := e.inner.Create(name)
	return e.wrap(name, f, err)
}

// OpenReadWrite opens the named file for reading and writing, creating it if absent.
func (e *ErrorFS) OpenReadWrite(name string) (File, error) {
	if err := e.check(OpOpenReadWrite, name, 0); err != nil {
		return nil, err
	}
	f, err := e.inner.OpenReadWrite(name)
	return e.wrap(name, f, err)
}

// Open opens the named file read-only.
func (e *ErrorFS) Open(name string) (File, error) {
	if err := e.check(OpOpen, name, 0); err != nil {
		return nil, err
	}
	f, err := e.inner.Open(name)
	return e.wrap(name, f, err)
}

// Remove removes a file or an empty directory.
func (e *ErrorFS) Remove(name string) error {
	if err := e.check(OpRemove, name, 0); err != nil {
		return err
	}
	return e.inner.Remove(name)
}

// RemoveAll removes a path and everything below it.
func (e *ErrorFS) RemoveAll(name string) error {
	if err := e.check(OpRemoveAll, name, 0); err != nil {
		return err
	}
	return e.inner.RemoveAll(name)
}

// Rename renames oldname to newname.
func (e *ErrorFS) Rename(oldname, newname string) error {
	if err := e.check(OpRename, oldname, 0); err != nil {
		return err
	}
	if err := e.check(OpRename, newname, 0); err != nil {
		return err
	}
	return e.inner.Rename(oldname, newname)
}

// MkdirAll creates a directory and its parents.
func (e *ErrorFS) MkdirAll(dir string, perm os.FileMode) error {
	if err := e.check(OpMkdirAll, dir, 0); err != nil {
		return err
	}
	return e.inner.MkdirAll(dir, perm)
}

// List returns the names of the entries in dir, sorted.
func (e *ErrorFS) List(dir string) ([]string, error) {
	if err := e.check(OpList, dir, 0); err != nil {
		return nil, err
	}
	return e.inner.List(dir)
}

// Stat describes the named file.
func (e *ErrorFS) Stat(name string) (os.FileInfo, error) {
	if err := e.check(OpStat, name, 0); err != nil {
		return nil, err
	}
	return e.inner.Stat(name)
}

// SyncDir makes the directory's entries durable.
func (e *ErrorFS) SyncDir(dir string) error {
	if err := e.check(OpSyncDir, dir, 0); err != nil {
		return err
	}
	return e.inner.SyncDir(dir)
}

// errorFile consults the injector before each operation on the inner file.
type errorFile struct {
	fs    *ErrorFS
	inner File
	name  string
}

func (f *errorFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.fs.check(OpRead, f.name, 0); err != nil {
		return 0, err
	}
	return f.inner.ReadAt(p, off)
}

func (f *errorFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.fs.check(OpWrite, f.name, len(p)); err != nil {
		return 0, err
	}
	return f.inner.WriteAt(p, off)
}

func (f *errorFile) Sync() error {
	if err := f.fs.check(OpSync, f.name, 0); err != nil {
		return err
	}
	return f.inner.Sync()
}

func (f *errorFile) Truncate(size int64) error {
	if err := f.fs.check(OpTruncate, f.name, 0); err != nil {
		return err
	}
	return f.inner.Truncate(size)
}

func (f *errorFile) Size() (int64, error) {
	if err := f.fs.check(OpSize, f.name, 0); err != nil {
		return 0, err
	}
	return f.inner.Size()
}

// Close always releases the inner file, as close(2) frees the descriptor
// even when it reports an error, then returns the injected error if any.
func (f *errorFile) Close() error {
	injected := f.fs.check(OpClose, f.name, 0)
	err := f.inner.Close()
	if injected != nil {
		return injected
	}
	return err
}

// WriteBudget is an Injector modelling a filling disk: writes succeed while
// their bytes fit in the remaining budget, and then fail with ENOSPC
// (writing nothing). Reads and all other operations go on.
type WriteBudget struct {
	mu        sync.Mutex
	remaining int64
}

// NewWriteBudget returns a budget of n bytes.
func NewWriteBudget(n int64) *WriteBudget { return &WriteBudget{remaining: n} }

// Set replaces the remaining budget, e.g. to model space freed by retention.
func (b *WriteBudget) Set(n int64) {
	b.mu.Lock()
	b.remaining = n
	b.mu.Unlock()
}

// Remaining returns the bytes still writable.
func (b *WriteBudget) Remaining() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.remaining
}

// MaybeError charges a write against the budget.
func (b *WriteBudget) MaybeError(op Op, _ string, n int) error {
	if op != OpWrite {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if int64(n) > b.remaining {
		return syscall.ENOSPC
	}
	b.remaining -= int64(n)
	return nil
}

// FailPaths returns an Injector failing every operation, of any kind, on a
// path for which match is true, with err (syscall.EIO models a dying disk).
func FailPaths(match func(path string) bool, err error) Injector {
	return InjectorFunc(func(_ Op, path string, _ int) error {
		if match(path) {
			return err
		}
		return nil
	})
}

// UnderDir returns a path predicate true for dir itself and everything below it.
func UnderDir(dir string) func(path string) bool {
	dir = filepath.Clean(dir)
	return func(path string) bool {
		path = filepath.Clean(path)
		return path == dir || strings.HasPrefix(path, dir+string(filepath.Separator)) || dir == string(filepath.Separator)
	}
}

// OnlyOps restricts inj to the listed operations.
func OnlyOps(inj Injector, ops ...Op) Injector {
	return InjectorFunc(func(op Op, path string, n int) error {
		for _, o := range ops {
			if o == op {
				return inj.MaybeError(op, path, n)
			}
		}
		return nil
	})
}

// AnyOf combines injectors: the first error any of them returns wins.
func AnyOf(injs ...Injector) Injector {
	return InjectorFunc(func(op Op, path string, n int) error {
		for _, inj := range injs {
			if err := inj.MaybeError(op, path, n); err != nil {
				return err
			}
		}
		return nil
	})
}
