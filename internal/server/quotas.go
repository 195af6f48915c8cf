package server

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"
)

// connectionQuotas is Kafka's ConnectionQuotas for one server:
// max.connections across its listeners, where the acceptor waits for a slot
// (the connection stays in the kernel's backlog), and max.connections.per.ip
// with its overrides, where a connection over the limit is closed as soon
// as it is accepted. The inter-broker listener, when the server has others
// too, never waits: it may take the count past max.connections, and the
// least recently active connection of another listener is closed instead.
type connectionQuotas struct {
	max       int // math.MaxInt: none
	maxPerIP  int
	overrides map[netip.Addr]int
	protected string // "" unless the server has several listeners

	mu    sync.Mutex
	total int
	perIP map[netip.Addr]int
	// evicting counts connections being closed to make room, still in total.
	evicting int
	// changed is closed and replaced whenever a connection is released, so
	// waiting acceptors (for a slot, or pausing after an accept error that
	// a released file descriptor may cure) look again.
	changed chan struct{}
}

func newConnectionQuotas(opts Options) (*connectionQuotas, error) {
	q := &connectionQuotas{
		max:      math.MaxInt,
		maxPerIP: math.MaxInt,
		perIP:    make(map[netip.Addr]int),
		changed:  make(chan struct{}),
	}
	if opts.MaxConnections > 0 {
		q.max = opts.MaxConnections
	}
	if opts.MaxConnectionsPerIP < 0 {
		return nil, fmt.Errorf("max.connections.per.ip %d must not be negative", opts.MaxConnectionsPerIP)
	}
	overrides, err := parsePerIPOverrides(opts.MaxConnectionsPerIPOverrides)
	if err != nil {
		return nil, err
	}
	q.overrides = overrides
	// Zero is Kafka's "only the overrides may connect"; zero without
	// overrides, which Kafka refuses, is the zero Options: no limit.
	if opts.MaxConnectionsPerIP > 0 || len(overrides) > 0 {
		q.maxPerIP = opts.MaxConnectionsPerIP
	}
	if len(opts.Listeners) > 1 {
		q.protected = opts.InterBrokerListener
	}
	return q, nil
}

// parsePerIPOverrides reads max.connections.per.ip.overrides as Kafka does
// ("host:count,host:count", split at each entry's last colon so IPv6
// addresses work). A host name stands for every address it resolves to now,
// as Kafka resolves it once when its quotas are built.
func parsePerIPOverrides(s string) (map[netip.Addr]int, error) {
	out := make(map[netip.Addr]int)
	for _, entry := range strings.Split(s, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		i := strings.LastIndexByte(entry, ':')
		if i < 0 {
			return nil, fmt.Errorf("max.connections.per.ip.overrides entry %q is not host:count", entry)
		}
		host := strings.Trim(strings.TrimSpace(entry[:i]), "[]")
		count, err := strconv.Atoi(strings.TrimSpace(entry[i+1:]))
		if err != nil || count < 0 {
			return nil, fmt.Errorf("max.connections.per.ip.overrides entry %q: count must be a non-negative integer", entry)
		}
		addrs, err := resolveHost(host)
		if err != nil {
			return nil, fmt.Errorf("max.connections.per.ip.overrides entry %q: %w", entry, err)
		}
		for _, a := range addrs {
			out[a] = count
		}
	}
	return out, nil
}

func resolveHost(host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a.Unmap()}, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	for i := range addrs {
		addrs[i] = addrs[i].Unmap()
	}
	return addrs, nil
}

// remoteIP is a connection's client address, or the zero Addr (not counted
// per address) for a connection that is not TCP.
func remoteIP(nc net.Conn) netip.Addr {
	if a, ok := nc.RemoteAddr().(*net.TCPAddr); ok {
		if ip, ok := netip.AddrFromSlice(a.IP); ok {
			return ip.Unmap()
		}
	}
	return netip.Addr{}
}

// acquireSlot takes a connection slot for listener, waiting while the server
// is at max.connections (unless listener is protected) until one is
// released or stop is closed. It returns how long it waited, and false if
// stopped. With take false it only waits for a free slot: the acceptor
// waits so before accepting, leaving connections in the kernel's backlog,
// and takes the slot once it has a connection (an idle acceptor holding a
// slot would keep another listener's clients waiting), waiting again in
// the rare case another listener's acceptor took the last slot meanwhile,
// as Kafka's acceptor waits holding the connection it accepted.
func (q *connectionQuotas) acquireSlot(listener string, stop <-chan struct{}, take bool) (time.Duration, bool) {
	var start time.Time
	q.mu.Lock()
	for listener != q.protected && q.total >= q.max {
		if start.IsZero() {
			start = time.Now()
		}
		changed := q.changed
		q.mu.Unlock()
		select {
		case <-changed:
		case <-stop:
			return time.Since(start), false
		}
		q.mu.Lock()
	}
	if take {
		q.total++
	}
	q.mu.Unlock()
	if start.IsZero() {
		return 0, true
	}
	return time.Since(start), true
}

// admit counts an accepted connection from ip against its per-address
// limit; over the limit it is not counted and the limit is returned with
// false. The connection's slot is taken already.
func (q *connectionQuotas) admit(ip netip.Addr) (int, bool) {
	if !ip.IsValid() {
		return 0, true
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	limit, ok := q.overrides[ip]
	if !ok {
		limit = q.maxPerIP
	}
	if q.perIP[ip] >= limit {
		return limit, false
	}
	q.perIP[ip]++
	return 0, true
}

// release gives back a connection's slot and, for a valid ip, its count
// against its address.
func (q *connectionQuotas) release(ip netip.Addr) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.total--
	if ip.IsValid() {
		if q.perIP[ip] <= 1 {
			delete(q.perIP, ip)
		} else {
			q.perIP[ip]--
		}
	}
	q.broadcastLocked()
}

// releaseEvicted releases a connection closed to make room.
func (q *connectionQuotas) releaseEvicted(ip netip.Addr) {
	q.mu.Lock()
	q.evicting--
	q.mu.Unlock()
	q.release(ip)
}

func (q *connectionQuotas) broadcastLocked() {
	close(q.changed)
	q.changed = make(chan struct{})
}

// changedCh is closed at the next release.
func (q *connectionQuotas) changedCh() <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.changed
}

// reserveEviction reports whether the server is past max.connections
// counting the connections already being closed, and if so counts one more
// as being closed: the caller closes one, or calls cancelEviction.
func (q *connectionQuotas) reserveEviction() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.total-q.evicting <= q.max {
		return false
	}
	q.evicting++
	return true
}

func (q *connectionQuotas) cancelEviction() {
	q.mu.Lock()
	q.evicting--
	q.mu.Unlock()
}

// perIPCount is the connections counted for ip (for tests).
func (q *connectionQuotas) perIPCount(ip netip.Addr) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.perIP[ip]
}
