package server

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-io/sluice/internal/api"
	"github.com/sluice-io/sluice/internal/auth"
	"github.com/sluice-io/sluice/internal/protocol"
	"github.com/sluice-io/sluice/internal/purgatory"
)

// conn is one client connection. Its goroutine (serve) reads a request,
// runs the handler and writes the response before reading the next
// request: one request in flight, as Kafka mutes a channel until its send
// completes. The response is written by the same goroutine: a writer
// goroutine the reader always waited for only added two goroutine
// switches per request (issue 24's profile).
type conn struct {
	srv      *Server
	registry *api.Registry
	nc       net.Conn
	listener string
	sock     *listenerMetrics
	state    api.ConnState
	log      *slog.Logger

	// ctx is cancelled when the server starts draining (a handler parked
	// on a long wait returns its answer now) or the connection is
	// force-closed (the answer is then never written).
	ctx    context.Context
	cancel context.CancelFunc

	// wbuf is the encoding buffer kept between responses (at most
	// maxRetainedWriteBuffer).
	wbuf []byte

	// frame is the request being read or served; its buffer is charged to
	// the server's request memory from its first byte until its response
	// is written.
	frame frameBuf
	// timing is the request in flight's timestamps; parked, carried by
	// ctx, gathers the time its handler waits in purgatories.
	timing requestTiming
	parked *purgatory.ParkedTime
	// ip is the client's address as counted by the connection quotas.
	ip netip.Addr
	// lastActive is when a request last arrived or a response was last
	// written (Unix nanoseconds): the least recently active connection is
	// the one closed when inter-broker connections exceed max.connections.
	lastActive atomic.Int64
	// throttledUntil is when a client quota's mute ends (throttle.go);
	// only the reader goroutine uses it.
	throttledUntil time.Time

	mu sync.Mutex
	// draining: read no further request (graceful shutdown).
	draining bool
	// closed: force-closed; no deadline may be re-armed.
	closed bool

	// evicted: closed to bring the server back to max.connections
	// (guarded by the server's mu).
	evicted bool

	// sasl is the SASL exchange on a SASL listener, nil elsewhere.
	sasl *saslConn
	// divert is a SASL listener's other protocol, recognised once the
	// connection has authenticated; diverted: handed to it (not closed).
	divert   *Divert
	diverted bool
}

// outgoing is a response to write.
type outgoing struct {
	correlationID int32
	flexible      bool
	resp          api.Response
	// rawToken, when set, sends raw instead: a SASL token framed by its
	// size alone (after SaslHandshake v0).
	rawToken bool
	raw      []byte
}

func newConn(s *Server, l Listener, registry *api.Registry, nc net.Conn, ip netip.Addr, principal auth.Principal) *conn {
	ctx, cancel := context.WithCancel(s.draining)
	c := &conn{
		srv:      s,
		registry: registry,
		nc:       nc,
		listener: l.Name,
		sock:     s.metrics.socket.listener(l.Name),
		ip:       ip,
		state: api.ConnState{Listener: l.Name, SecurityProtocol: securityProtocol(l), Principal: principal,
			RemoteAddr: nc.RemoteAddr(), LocalAddr: nc.LocalAddr()},
		log:    s.log.With("listener", l.Name, "remote", nc.RemoteAddr().String()),
		cancel: cancel,
		timing: requestTiming{clk: s.clock},
		parked: purgatory.NewParkedTime(s.clock),
	}
	c.ctx = purgatory.WithParkedTime(ctx, c.parked)
	if l.SASL != nil {
		c.sasl = newSASLConn(c, l.SASL)
		c.state.SASL = c.sasl
		c.divert = l.Divert
	}
	c.touch()
	return c
}

// touch records activity for the least-recently-active order.
func (c *conn) touch() { c.lastActive.Store(time.Now().UnixNano()) }

// serve runs the connection until the client leaves, a protocol error or
// shutdown, and closes the socket.
func (c *conn) serve() {
	c.readLoop()
	c.cancel()
	c.registry.ConnClosed(&c.state)
	if !c.diverted {
		c.nc.Close()
	}
}

// drain asks the reader to stop after the request in flight; a reader
// blocked waiting for a request is woken by an expired deadline.
func (c *conn) drain() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.draining = true
	c.nc.SetReadDeadline(time.Now())
}

// forceClose abandons the request in flight. The deadline comes first so a
// handler woken by the cancellation cannot get its answer written.
func (c *conn) forceClose() {
	c.mu.Lock()
	c.closed = true
	c.nc.SetDeadline(time.Now())
	c.mu.Unlock()
	c.cancel()
}

// armRead sets the idle deadline for the next request, unless draining,
// and returns it.
func (c *conn) armRead() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.draining || c.closed {
		return time.Time{}, false
	}
	deadline := time.Now().Add(c.srv.opts.IdleTimeout)
	c.nc.SetReadDeadline(deadline)
	return deadline, true
}

// errForceClosed is a write given up because the connection was force-closed.
var errForceClosed = errors.New("connection force-closed")

// armWrite sets the write deadline for the next piece of a response:
// connections.max.idle.ms from now. Kafka has no write timeout, but its
// selector closes a connection that makes no progress (no bytes read or
// written) for connections.max.idle.ms, which is what a client that never
// reads its responses comes to once the socket buffers are full.
func (c *conn) armWrite() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errForceClosed
	}
	c.nc.SetWriteDeadline(time.Now().Add(c.srv.opts.IdleTimeout))
	return nil
}

func (c *conn) isDraining() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.draining
}

func (c *conn) readLoop() {
	br := bufio.NewReaderSize(c.nc, 8<<10)
	mem := c.srv.mem
	for {
		c.waitThrottle()
		deadline, ok := c.armRead()
		if !ok {
			return
		}
		if c.divert != nil && c.sasl.authenticated() && c.divertAuthenticated(br) {
			return
		}
		limit := c.srv.opts.MaxRequestSize
		if c.sasl != nil {
			limit = c.sasl.frameLimit(limit)
		}
		if err := mem.readFrame(c.ctx, br, limit, deadline, &c.frame); err != nil {
			mem.release(&c.frame, true)
			if c.sasl != nil {
				c.sasl.readFailed(err)
			}
			c.readFailed(err)
			return
		}
		c.touch()
		frame := c.frame.b
		raw := c.sasl != nil && c.sasl.rawTokens()
		var served bool
		if raw {
			served = c.serveRawToken(frame)
		} else {
			served = c.serveRequest(frame)
		}
		mem.release(&c.frame, !raw && len(frame) >= 2 && frameReusableAfter(int16(binary.BigEndian.Uint16(frame))))
		if !served {
			return
		}
	}
}

// frameReusableAfter reports whether a request of this key leaves nothing
// referring to its frame once its response is written (serveRequest returns
// only then), so its buffer may go back to the pool for any connection's
// next request. kmsg copies strings out of the frame but byte fields alias
// it, so a key qualifies only when its handler is known to keep none of
// them: Produce (the records are written to the log before the answer; the
// log keeps no reference) and Fetch (no byte fields). Any other key's buffer
// (group metadata and assignments are kept by the coordinator) is left to
// the garbage collector.
func frameReusableAfter(apiKey int16) bool {
	switch apiKey {
	case 0, 1:
		return true
	default:
		return false
	}
}

// serveRequest handles one request frame and waits until its response is
// written; false means the connection must close.
func (c *conn) serveRequest(frame []byte) bool {
	t := &c.timing
	t.begin()
	c.sock.bytesIn.Add(uint64(len(frame) + 4))
	header, body, err := protocol.ParseRequestHeader(frame)
	if err != nil {
		if c.sasl != nil {
			c.sasl.requestFailed()
		}
		c.closeFor(header, reasonFor(err), err)
		return false
	}
	if c.sasl != nil && !c.sasl.admit(header) {
		return false
	}
	c.parked.Take()
	resp, err := c.registry.ServeObserved(c.ctx, &c.state, header, body, t)
	t.handled, t.remote = t.clk.Now(), c.parked.Take()
	switch {
	case err != nil:
		if c.sasl != nil {
			c.sasl.requestFailed()
		}
		c.closeFor(header, reasonFor(err), err)
		return false
	case !resp.Valid():
		c.closeFor(header, reasonHandler, fmt.Errorf("handler for api key %d returned no response kind", header.APIKey))
		return false
	case resp.CloseReason() != nil:
		c.closeFor(header, reasonHandler, resp.CloseReason())
		return false
	}
	t.apiKey, t.version, t.served, t.bodyBytes = header.APIKey, header.APIVersion, c.versionServed(header), len(body)
	if !c.respond(header, resp) {
		return false
	}
	c.srv.metrics.requests.record(t, resp)
	c.noteThrottle(resp)
	return c.sasl == nil || !c.sasl.closeAfter
}

// respond writes the response.
func (c *conn) respond(h protocol.RequestHeader, resp api.Response) bool {
	if resp.IsNoResponse() {
		c.timing.dequeued, c.timing.sent = c.timing.handled, c.timing.handled
		return true
	}
	err := c.send(outgoing{
		correlationID: h.CorrelationID,
		flexible:      protocol.ResponseHeaderFlexible(h.APIKey, h.APIVersion),
		resp:          resp,
	})
	if err != nil {
		if !c.isDraining() {
			c.closeFor(h, reasonWrite, err)
		}
		return false
	}
	return true
}

func (c *conn) readFailed(err error) {
	var tooLarge *protocol.FrameTooLargeError
	switch {
	case errors.As(err, &tooLarge):
		c.closeFor(protocol.RequestHeader{APIKey: -1}, reasonFrameTooLarge, err)
	case errors.Is(err, protocol.ErrNegativeFrameSize):
		c.closeFor(protocol.RequestHeader{APIKey: -1}, reasonMalformed, err)
	case c.isDraining(), errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed):
		c.log.Debug("connection closed", "err", err)
	default:
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			c.log.Debug("idle connection closed", "idle", c.srv.opts.IdleTimeout)
			return
		}
		c.log.Info("connection read failed", "err", err)
	}
}

func reasonFor(err error) string {
	var unknown *protocol.UnknownAPIKeyError
	var unsupported *protocol.UnsupportedVersionError
	switch {
	case errors.As(err, &unknown):
		return reasonUnknownKey
	case errors.As(err, &unsupported):
		return reasonUnsupportedVersion
	default:
		return reasonMalformed
	}
}

// closeFor logs, once, why the connection is being closed.
func (c *conn) closeFor(h protocol.RequestHeader, reason string, err error) {
	c.srv.metrics.errors.WithLabelValues(requestName(h.APIKey), reason).Inc()
	c.log.Warn("closing connection", "reason", reason, "api_key", h.APIKey, "api_version", h.APIVersion,
		"correlation_id", h.CorrelationID, "client_id", h.ClientIDString(), "err", err)
}

// maxRetainedWriteBuffer bounds the encoding buffer a connection keeps
// between responses, so one huge response does not pin memory for the
// connection's lifetime.
const maxRetainedWriteBuffer = 1 << 20

// writeChunk is the piece of an encoded response written under one write
// deadline: a response makes progress or the connection closes.
const writeChunk = 1 << 20

// send writes o, recording its send times and bytes.
func (c *conn) send(o outgoing) error {
	c.timing.dequeued = c.srv.clock.Now()
	n, err := c.write(o, &c.wbuf)
	c.timing.sent = c.srv.clock.Now()
	if cap(c.wbuf) > maxRetainedWriteBuffer {
		c.wbuf = nil
	}
	c.sock.bytesOut.Add(uint64(n))
	if err == nil {
		c.touch()
	}
	return err
}

func (c *conn) write(o outgoing, buf *[]byte) (int64, error) {
	if o.rawToken {
		*buf = binary.BigEndian.AppendUint32((*buf)[:0], uint32(len(o.raw)))
		*buf = append(*buf, o.raw...)
		return c.writeChunks(*buf)
	}
	if body := o.resp.Body(); body != nil {
		*buf = protocol.AppendResponseFrame((*buf)[:0], o.correlationID, o.flexible, body)
		return c.writeChunks(*buf)
	}
	stream := o.resp.StreamBody()
	size := int64(protocol.ResponseHeaderSize(o.flexible)) + stream.Len()
	if size > math.MaxInt32 {
		return 0, fmt.Errorf("response of %d bytes exceeds the protocol's frame limit", size)
	}
	head := make([]byte, 4, 9)
	protocol.PutFrameSize(head, 0, int(size))
	head = protocol.AppendResponseHeader(head, o.correlationID, o.flexible)
	// A streamed body goes to the socket itself (sendfile), so its whole
	// write runs under one deadline rather than one per piece.
	if err := c.armWrite(); err != nil {
		return 0, err
	}
	return stream.WriteFrame(c.nc, head)
}

// writeChunks writes b in pieces of writeChunk bytes, each under a fresh
// write deadline.
func (c *conn) writeChunks(b []byte) (int64, error) {
	var written int64
	for len(b) > 0 {
		if err := c.armWrite(); err != nil {
			return written, err
		}
		n, err := c.nc.Write(b[:min(len(b), writeChunk)])
		written += int64(n)
		if err != nil {
			return written, err
		}
		b = b[n:]
	}
	return written, nil
}
