package netfault

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// socketInode finds the inode of the TCP socket whose local address is
// local and whose peer is remote, from Linux's /proc/net/tcp (and tcp6):
// the client end of a connection a proxy accepted. ok is false when no
// such socket is listed (not Linux, or the client already closed it).
func socketInode(local, remote *net.TCPAddr) (inode string, ok bool, err error) {
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		inode, ok, err = findSocket(table, local, remote)
		if err != nil || ok {
			return inode, ok, err
		}
	}
	return "", false, nil
}

func findSocket(table string, local, remote *net.TCPAddr) (string, bool, error) {
	f, err := os.Open(table)
	if os.IsNotExist(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read %s: %w", table, err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	s.Scan() // the header line
	for s.Scan() {
		// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode ...
		fields := strings.Fields(s.Text())
		if len(fields) < 10 {
			continue
		}
		if sameProcAddr(fields[1], local) && sameProcAddr(fields[2], remote) {
			return fields[9], true, nil
		}
	}
	if err := s.Err(); err != nil {
		return "", false, fmt.Errorf("read %s: %w", table, err)
	}
	return "", false, nil
}

// sameProcAddr compares a /proc/net/tcp address (hex IP in the kernel's
// 32-bit words as they lie in memory, then a hex port) with a.
func sameProcAddr(field string, a *net.TCPAddr) bool {
	ipHex, portHex, ok := strings.Cut(field, ":")
	if !ok {
		return false
	}
	port, err := strconv.ParseUint(portHex, 16, 16)
	if err != nil || int(port) != a.Port {
		return false
	}
	raw, err := hex.DecodeString(ipHex)
	if err != nil || len(raw)%4 != 0 {
		return false
	}
	// Each 32-bit word is printed as a native (little-endian on the
	// machines we run on) integer, so its bytes come reversed.
	ip := make(net.IP, len(raw))
	for i := 0; i < len(raw); i += 4 {
		binary.BigEndian.PutUint32(ip[i:], binary.LittleEndian.Uint32(raw[i:]))
	}
	return ip.Equal(a.IP)
}

// ownsSocket reports whether process pid has the socket inode open.
func ownsSocket(pid int, inode string) bool {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false // gone, or not ours to read
	}
	want := "socket:[" + inode + "]"
	for _, e := range entries {
		if target, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && target == want {
			return true
		}
	}
	return false
}

// identifyAttempts covers the moment between a node's process starting
// and its pid being recorded.
const identifyAttempts = 3

// Owners attributes connections to nodes by the process holding their
// client end: node i is the process whose pid was last Set for i. Its
// Identify is a Proxy's identify function.
type Owners struct {
	mu   sync.Mutex
	pids []int // node index -> pid of its running process, 0 when none
}

// NewOwners returns an identifier for nodes 0..n-1, none running yet.
func NewOwners(n int) *Owners {
	return &Owners{pids: make([]int, n)}
}

// Set records node i's process id (0 once it is gone).
func (o *Owners) Set(i, pid int) {
	o.mu.Lock()
	o.pids[i] = pid
	o.mu.Unlock()
}

// Identify finds which node's process holds the client end of an accepted
// connection, from /proc (Linux); UnknownNode when none does.
func (o *Owners) Identify(client, listener net.Addr) int {
	c, ok1 := client.(*net.TCPAddr)
	l, ok2 := listener.(*net.TCPAddr)
	if !ok1 || !ok2 {
		return UnknownNode
	}
	for attempt := range identifyAttempts {
		if attempt > 0 {
			time.Sleep(10 * time.Millisecond)
		}
		inode, ok, err := socketInode(c, l)
		if err != nil || !ok {
			return UnknownNode
		}
		o.mu.Lock()
		pids := append([]int(nil), o.pids...)
		o.mu.Unlock()
		for i, pid := range pids {
			if pid != 0 && ownsSocket(pid, inode) {
				return i
			}
		}
	}
	return UnknownNode
}
