package vfs

import (
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrCrashed is returned by every operation on a file handle opened before
// the last MemFS.Crash: like a process killed mid-flight, it has no files.
var ErrCrashed = errors.New("vfs: file handle opened before a simulated crash")

// MemFS is an in-memory FS for tests, safe for concurrent use. It keeps, for
// every file, the contents last made durable by Sync and, for every
// directory, the entries last made durable by SyncDir, so Crash can roll the
// whole tree back to what a real disk would still hold after power loss.
//
// This is deliberately strict: a directory made by MkdirAll, like a file
// made by Create, survives a crash only once its parent has been synced with
// SyncDir; file contents survive only up to the last Sync.
//
// Paths are slash- or OS-separated; relative paths are taken from the root.
type MemFS struct {
	mu   sync.Mutex
	root *memNode
	// generation counts crashes; a handle remembers the generation it was
	// opened in and is dead once it differs.
	generation uint64
}

// memNode is a file or a directory (an inode: renames move the same node).
type memNode struct {
	isDir bool

	// Files. Invariant: data[:dirtyFrom] == synced[:dirtyFrom] and
	// dirtyFrom <= min(len(data), len(synced)); the file is clean when
	// dirtyFrom == len(data) == len(synced). data and synced never share
	// memory, so Sync copies only the dirty tail.
	data      []byte
	synced    []byte
	dirtyFrom int

	// Directories: the live entries and those durable as of the last SyncDir.
	children       map[string]*memNode
	syncedChildren map[string]*memNode
}

func newDirNode() *memNode {
	return &memNode{isDir: true, children: map[string]*memNode{}, syncedChildren: map[string]*memNode{}}
}

// NewMem returns an empty in-memory file system holding only the root directory.
func NewMem() *MemFS { return &MemFS{root: newDirNode()} }

var _ FS = (*MemFS)(nil)

// split cleans name into its path components below the root.
func split(name string) []string {
	p := path.Clean("/" + filepath.ToSlash(name))
	if p == "/" {
		return nil
	}
	return strings.Split(p[1:], "/")
}

func pathErr(op, name string, err error) error { return &fs.PathError{Op: op, Path: name, Err: err} }

// walk returns the node at parts, or an error for op on name.
func (m *MemFS) walk(op, name string, parts []string) (*memNode, error) {
	n := m.root
	for _, part := range parts {
		if !n.isDir {
			return nil, pathErr(op, name, syscall.ENOTDIR)
		}
		child, ok := n.children[part]
		if !ok {
			return nil, pathErr(op, name, fs.ErrNotExist)
		}
		n = child
	}
	return n, nil
}

// parentOf returns the directory holding the last component of parts and
// that component's name. The root has no parent.
func (m *MemFS) parentOf(op, name string, parts []string) (*memNode, string, error) {
	if len(parts) == 0 {
		return nil, "", pathErr(op, name, syscall.EINVAL)
	}
	dir, err := m.walk(op, name, parts[:len(parts)-1])
	if err != nil {
		return nil, "", err
	}
	if !dir.isDir {
		return nil, "", pathErr(op, name, syscall.ENOTDIR)
	}
	return dir, parts[len(parts)-1], nil
}

// Create creates or truncates the named file.
func (m *MemFS) Create(name string) (File, error) {
	return m.openFile("create", name, true, true)
}

// OpenReadWrite opens the named file for reading and writing, creating it if absent.
func (m *MemFS) OpenReadWrite(name string) (File, error) {
	return m.openFile("open", name, true, false)
}

// Open opens the named file read-only.
func (m *MemFS) Open(name string) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.walk("open", name, split(name))
	if err != nil {
		return nil, err
	}
	if n.isDir {
		return nil, pathErr("open", name, syscall.EISDIR)
	}
	return &memFile{fs: m, node: n, name: name, readOnly: true, generation: m.generation}, nil
}

func (m *MemFS) openFile(op, name string, create, truncate bool) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir, base, err := m.parentOf(op, name, split(name))
	if err != nil {
		return nil, err
	}
	n, ok := dir.children[base]
	switch {
	case ok && n.isDir:
		return nil, pathErr(op, name, syscall.EISDIR)
	case ok && truncate:
		n.truncate(0)
	case !ok && create:
		n = &memNode{}
		dir.children[base] = n
	case !ok:
		return nil, pathErr(op, name, fs.ErrNotExist)
	}
	return &memFile{fs: m, node: n, name: name, generation: m.generation}, nil
}

// Remove removes a file or an empty directory.
func (m *MemFS) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir, base, err := m.parentOf("remove", name, split(name))
	if err != nil {
		return err
	}
	n, ok := dir.children[base]
	if !ok {
		return pathErr("remove", name, fs.ErrNotExist)
	}
	if n.isDir && len(n.children) > 0 {
		return pathErr("remove", name, syscall.ENOTEMPTY)
	}
	delete(dir.children, base)
	return nil
}

// RemoveAll removes a path and everything below it; a missing path is not an error.
func (m *MemFS) RemoveAll(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	parts := split(name)
	if len(parts) == 0 {
		clear(m.root.children)
		return nil
	}
	dir, base, err := m.parentOf("removeall", name, parts)
	if IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	delete(dir.children, base)
	return nil
}

// Rename renames oldname to newname, replacing a file or an empty directory
// at newname, as rename(2) does.
func (m *MemFS) Rename(oldname, newname string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	oldParts, newParts := split(oldname), split(newname)
	oldDir, oldBase, err := m.parentOf("rename", oldname, oldParts)
	if err != nil {
		return err
	}
	n, ok := oldDir.children[oldBase]
	if !ok {
		return pathErr("rename", oldname, fs.ErrNotExist)
	}
	newDir, newBase, err := m.parentOf("rename", newname, newParts)
	if err != nil {
		return err
	}
	if n.isDir && len(newParts) > len(oldParts) && slices.Equal(newParts[:len(oldParts)], oldParts) {
		return pathErr("rename", newname, syscall.EINVAL) // into its own subtree
	}
	if target, exists := newDir.children[newBase]; exists && target != n {
		switch {
		case target.isDir && !n.isDir:
			return pathErr("rename", newname, syscall.EISDIR)
		case !target.isDir && n.isDir:
			return pathErr("rename", newname, syscall.ENOTDIR)
		case target.isDir && len(target.children) > 0:
			return pathErr("rename", newname, syscall.ENOTEMPTY)
		}
	}
	delete(oldDir.children, oldBase)
	newDir.children[newBase] = n
	return nil
}

// MkdirAll creates a directory and its parents.
func (m *MemFS) MkdirAll(dir string, _ os.FileMode) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.root
	for _, part := range split(dir) {
		child, ok := n.children[part]
		if !ok {
			child = newDirNode()
			n.children[part] = child
		}
		if !child.isDir {
			return pathErr("mkdir", dir, syscall.ENOTDIR)
		}
		n = child
	}
	return nil
}

// List returns the names of the entries in dir, sorted.
func (m *MemFS) List(dir string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.walk("readdir", dir, split(dir))
	if err != nil {
		return nil, err
	}
	if !n.isDir {
		return nil, pathErr("readdir", dir, syscall.ENOTDIR)
	}
	names := make([]string, 0, len(n.children))
	for name := range n.children {
		names = append(names, name)
	}
	slices.Sort(names)
	return names, nil
}

// Stat describes the named file.
func (m *MemFS) Stat(name string) (os.FileInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	parts := split(name)
	n, err := m.walk("stat", name, parts)
	if err != nil {
		return nil, err
	}
	base := "/"
	if len(parts) > 0 {
		base = parts[len(parts)-1]
	}
	return memFileInfo{name: base, size: int64(len(n.data)), dir: n.isDir}, nil
}

// SyncDir makes dir's current entries durable.
func (m *MemFS) SyncDir(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.walk("syncdir", dir, split(dir))
	if err != nil {
		return err
	}
	if !n.isDir {
		return pathErr("syncdir", dir, syscall.ENOTDIR)
	}
	n.syncedChildren = cloneEntries(n.children)
	return nil
}

func cloneEntries(entries map[string]*memNode) map[string]*memNode {
	c := make(map[string]*memNode, len(entries))
	for k, v := range entries {
		c[k] = v
	}
	return c
}

// Crash simulates power loss: afterwards the file system holds only what
// was durable (synced contents under synced directory entries), and every
// handle opened before fails with ErrCrashed.
func (m *MemFS) Crash() { m.crash(nil) }

// CrashTornWrites is Crash, except that each file also keeps a random-length
// prefix (chosen by rng) of the writes made since its last Sync, as a disk
// may have written part of them before losing power: a torn tail.
func (m *MemFS) CrashTornWrites(rng *rand.Rand) { m.crash(rng) }

func (m *MemFS) crash(rng *rand.Rand) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.generation++
	m.root = durableCopy(m.root, rng)
}

// durableCopy builds a fresh node holding what n would hold after a crash. A
// node reachable through two durable entries (renamed, with only one of the
// two directories synced) becomes two independent copies.
func durableCopy(n *memNode, rng *rand.Rand) *memNode {
	if n.isDir {
		c := newDirNode()
		for name, child := range n.syncedChildren {
			cc := durableCopy(child, rng)
			c.children[name] = cc
			c.syncedChildren[name] = cc
		}
		return c
	}
	kept := slices.Clone(n.synced)
	if rng != nil && n.dirtyFrom < len(n.data) {
		tail := n.data[n.dirtyFrom:]
		torn := tail[:rng.IntN(len(tail)+1)]
		end := n.dirtyFrom + len(torn)
		if end > len(kept) {
			kept = append(kept, make([]byte, end-len(kept))...)
		}
		copy(kept[n.dirtyFrom:], torn)
	}
	return &memNode{data: kept, synced: slices.Clone(kept), dirtyFrom: len(kept)}
}

// truncate sets the file's length, zero-filling any growth.
func (n *memNode) truncate(size int) {
	if size < len(n.data) {
		n.data = n.data[:size]
		n.dirtyFrom = min(n.dirtyFrom, size)
		return
	}
	n.dirtyFrom = min(n.dirtyFrom, len(n.data))
	n.data = append(n.data, make([]byte, size-len(n.data))...)
}

func (n *memNode) writeAt(p []byte, off int) {
	n.dirtyFrom = min(n.dirtyFrom, off, len(n.data))
	if end := off + len(p); end > len(n.data) {
		n.data = append(n.data, make([]byte, end-len(n.data))...)
	}
	copy(n.data[off:], p)
}

func (n *memNode) sync() {
	n.synced = append(n.synced[:n.dirtyFrom], n.data[n.dirtyFrom:]...)
	n.dirtyFrom = len(n.data)
}

// memFile is an open handle on a MemFS file.
type memFile struct {
	fs         *MemFS
	node       *memNode
	name       string
	readOnly   bool
	generation uint64
	closed     bool
}

// usable reports why the handle cannot be used for op, if it cannot.
// The caller holds fs.mu.
func (f *memFile) usable(op string) error {
	if f.closed {
		return pathErr(op, f.name, fs.ErrClosed)
	}
	if f.generation != f.fs.generation {
		return pathErr(op, f.name, ErrCrashed)
	}
	return nil
}

func (f *memFile) writable(op string) error {
	if err := f.usable(op); err != nil {
		return err
	}
	if f.readOnly {
		return pathErr(op, f.name, syscall.EBADF)
	}
	return nil
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.usable("read"); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, pathErr("read", f.name, syscall.EINVAL)
	}
	if off >= int64(len(f.node.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.node.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.writable("write"); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, pathErr("write", f.name, syscall.EINVAL)
	}
	f.node.writeAt(p, int(off))
	return len(p), nil
}

func (f *memFile) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.usable("sync"); err != nil {
		return err
	}
	f.node.sync()
	return nil
}

func (f *memFile) Truncate(size int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.writable("truncate"); err != nil {
		return err
	}
	if size < 0 {
		return pathErr("truncate", f.name, syscall.EINVAL)
	}
	f.node.truncate(int(size))
	return nil
}

func (f *memFile) Size() (int64, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.usable("stat"); err != nil {
		return 0, err
	}
	return int64(len(f.node.data)), nil
}

// Close releases the handle. Closing a handle that outlived a crash
// succeeds, so cleanup code after a simulated crash need not special-case it.
func (f *memFile) Close() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return pathErr("close", f.name, fs.ErrClosed)
	}
	f.closed = true
	return nil
}

type memFileInfo struct {
	name string
	size int64
	dir  bool
}

func (i memFileInfo) Name() string { return i.name }
func (i memFileInfo) Size() int64  { return i.size }
func (i memFileInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
func (i memFileInfo) ModTime() time.Time { return time.Time{} }
func (i memFileInfo) IsDir() bool        { return i.dir }
func (i memFileInfo) Sys() any           { return nil }
