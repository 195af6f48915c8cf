package netfault

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"
)

// CutMode is how a cut node's connections fail.
type CutMode int

const (
	// Refuse closes every connection touching the node and every new one
	// at once, as a peer answering with a reset would: both sides learn of
	// the cut immediately.
	Refuse CutMode = iota + 1
	// Blackhole stalls them instead: new connections are accepted but not
	// forwarded, bytes already flowing stop where they are, and nobody is
	// told, as with a pulled cable. Senders find out only through their
	// own timeouts. Heal lets surviving connections carry on with the
	// bytes they held, as TCP retransmission would after a short cut.
	Blackhole
)

func (m CutMode) String() string {
	switch m {
	case Refuse:
		return "refuse"
	case Blackhole:
		return "blackhole"
	}
	return fmt.Sprintf("CutMode(%d)", int(m))
}

// UnknownNode is the source of a connection the proxy could not attribute
// to a node (a test client, say): only its destination's cut applies.
const UnknownNode = -1

// proxyDialTimeout bounds the connection to the real address.
const proxyDialTimeout = 5 * time.Second

// Proxy forwards TCP connections between the nodes of a cluster and can cut
// a node off its peers. Each Listen is one node's listener seen through the
// proxy; the source of every accepted connection is found by identify, so
// a cut drops traffic in both directions: to the node's listeners and from
// the node to anyone else's. A node's connections to itself are never cut,
// as loopback traffic survives a real network cut.
type Proxy struct {
	identify func(client, listener net.Addr) int
	log      *slog.Logger
	wg       sync.WaitGroup

	mu struct {
		sync.Mutex
		cuts map[int]CutMode
		// linkCuts are cuts between two nodes only, keyed lower id first.
		linkCuts map[[2]int]CutMode
		// changed is closed (and replaced) whenever cuts change or the
		// proxy closes, waking every stalled connection to look again.
		changed   chan struct{}
		closed    bool
		listeners []net.Listener
		links     map[*proxyLink]struct{}
	}
}

// proxyLink is one client connection and its forwarded twin.
type proxyLink struct {
	from, to int
	client   net.Conn
	server   net.Conn // nil until dialed; set under Proxy.mu
	done     chan struct{}
	once     sync.Once
}

// NewProxy returns a proxy that attributes each accepted connection to a
// node with identify (UnknownNode when it cannot). log may be nil.
func NewProxy(identify func(client, listener net.Addr) int, log *slog.Logger) *Proxy {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Proxy{identify: identify, log: log}
	p.mu.cuts = make(map[int]CutMode)
	p.mu.linkCuts = make(map[[2]int]CutMode)
	p.mu.changed = make(chan struct{})
	p.mu.links = make(map[*proxyLink]struct{})
	return p
}

// Listen opens a listener on a free port of 127.0.0.1 that forwards to
// target, a listener of node; it returns the proxy's address.
func (p *Proxy) Listen(node int, target string) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("proxy for node %d at %s: %w", node, target, err)
	}
	p.mu.Lock()
	if p.mu.closed {
		p.mu.Unlock()
		ln.Close()
		return "", errors.New("proxy closed")
	}
	p.mu.listeners = append(p.mu.listeners, ln)
	p.wg.Add(1)
	p.mu.Unlock()
	go func() {
		defer p.wg.Done()
		p.accept(ln, node, target)
	}()
	return ln.Addr().String(), nil
}

func (p *Proxy) accept(ln net.Listener, node int, target string) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			return // closed by Close
		}
		p.mu.Lock()
		if p.mu.closed {
			p.mu.Unlock()
			conn.Close()
			return
		}
		p.wg.Add(1)
		p.mu.Unlock()
		go func() {
			defer p.wg.Done()
			// Identifying reads /proc, so it runs here rather than
			// holding up the next accept. A cut made meanwhile still
			// applies: forward checks before dialing.
			from := p.identify(conn.RemoteAddr(), conn.LocalAddr())
			l := &proxyLink{from: from, to: node, client: conn, done: make(chan struct{})}
			if !p.track(l) {
				conn.Close()
				return
			}
			defer p.forget(l)
			p.forward(l, target)
		}()
	}
}

// forward connects l to target once no cut stands in the way, then copies
// both ways until either side closes or a cut refuses it.
func (p *Proxy) forward(l *proxyLink, target string) {
	defer l.close()
	if !p.awaitPassable(l) {
		return
	}
	server, err := net.DialTimeout("tcp", target, proxyDialTimeout)
	if err != nil {
		p.log.Debug("proxy dial", "from", l.from, "to", l.to, "err", err)
		return
	}
	p.mu.Lock()
	l.server = server
	p.mu.Unlock()
	select {
	case <-l.done: // closed by a cut while dialing
		server.Close()
		return
	default:
	}
	var pumps sync.WaitGroup
	pumps.Add(2)
	go func() {
		defer pumps.Done()
		p.pump(l, server, l.client)
	}()
	go func() {
		defer pumps.Done()
		p.pump(l, l.client, server)
	}()
	pumps.Wait()
}

// pump copies src to dst; every chunk read waits until the link may pass,
// so a blackholed link holds what it read without forwarding it.
func (p *Proxy) pump(l *proxyLink, dst, src net.Conn) {
	defer l.close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.awaitPassable(l) {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				p.log.Debug("proxy read", "from", l.from, "to", l.to, "err", err)
			}
			return
		}
	}
}

// awaitPassable blocks while a blackhole cut holds l; it reports false
// when l must close instead (refused, closed, or the proxy closing).
func (p *Proxy) awaitPassable(l *proxyLink) bool {
	for {
		p.mu.Lock()
		if p.mu.closed {
			p.mu.Unlock()
			return false
		}
		mode, cut := p.cutLocked(l)
		changed := p.mu.changed
		p.mu.Unlock()
		if !cut {
			return true
		}
		if mode == Refuse {
			return false
		}
		select {
		case <-changed:
		case <-l.done:
			return false
		}
	}
}

// cutLocked is the cut that applies to l, if any.
func (p *Proxy) cutLocked(l *proxyLink) (CutMode, bool) {
	if l.from == l.to {
		return 0, false
	}
	if m, ok := p.mu.cuts[l.to]; ok {
		return m, true
	}
	if m, ok := p.mu.cuts[l.from]; ok {
		return m, true
	}
	m, ok := p.mu.linkCuts[linkKey(l.from, l.to)]
	return m, ok
}

func linkKey(a, b int) [2]int {
	if a > b {
		a, b = b, a
	}
	return [2]int{a, b}
}

// Cut cuts node off every other node until Heal: its connections are
// closed (Refuse) or stalled (Blackhole), and new ones fare the same.
func (p *Proxy) Cut(node int, mode CutMode) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mu.cuts[node] = mode
	p.applyCutLocked(mode)
}

// CutLink cuts the traffic between nodes a and b, both ways, until
// HealLink; each keeps talking to everyone else (a partial partition).
func (p *Proxy) CutLink(a, b int, mode CutMode) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mu.linkCuts[linkKey(a, b)] = mode
	p.applyCutLocked(mode)
}

// HealLink ends the cut between a and b.
func (p *Proxy) HealLink(a, b int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.mu.linkCuts, linkKey(a, b))
	p.broadcastLocked()
}

// applyCutLocked wakes stalled links to look again and closes those whose
// cut (as cutLocked picks it when several apply) refuses.
func (p *Proxy) applyCutLocked(mode CutMode) {
	p.broadcastLocked()
	if mode != Refuse {
		return
	}
	for l := range p.mu.links {
		if m, cut := p.cutLocked(l); cut && m == Refuse {
			l.close()
		}
	}
}

// Heal ends node's cut; stalled connections carry on.
func (p *Proxy) Heal(node int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.mu.cuts, node)
	p.broadcastLocked()
}

// Links is the number of connections currently open through the proxy.
func (p *Proxy) Links() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.mu.links)
}

func (p *Proxy) broadcastLocked() {
	close(p.mu.changed)
	p.mu.changed = make(chan struct{})
}

// track registers l so cuts and Close reach it; false once closed.
func (p *Proxy) track(l *proxyLink) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.closed {
		return false
	}
	p.mu.links[l] = struct{}{}
	return true
}

func (p *Proxy) forget(l *proxyLink) {
	p.mu.Lock()
	delete(p.mu.links, l)
	p.mu.Unlock()
}

// Close stops every listener and connection and waits for the proxy's
// goroutines to end.
func (p *Proxy) Close() {
	p.mu.Lock()
	if !p.mu.closed {
		p.mu.closed = true
		for _, ln := range p.mu.listeners {
			ln.Close()
		}
		for l := range p.mu.links {
			l.close()
		}
		p.broadcastLocked()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// close closes both sides of l once. It takes no lock, so callers may hold
// Proxy.mu; l.server is safe to read here because it is set under
// Proxy.mu before the pumps start, and every other caller either holds
// Proxy.mu or runs after it was set (forward and the pumps). A server
// dialed after a close is closed by forward itself.
func (l *proxyLink) close() {
	l.once.Do(func() {
		close(l.done)
		l.client.Close()
		if l.server != nil {
			l.server.Close()
		}
	})
}
