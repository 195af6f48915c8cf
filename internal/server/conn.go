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
	"sync"
	"time"

	"sluice/internal/api"
	"sluice/internal/protocol"
)

// conn is one client connection. Its reader goroutine (serve) reads a
// request, runs the handler and hands the response to the writer goroutine,
// then waits until the response is written before reading the next request:
// one request in flight, as Kafka mutes a channel until its send completes.
type conn struct {
	srv      *Server
	registry *api.Registry
	nc       net.Conn
	listener string
	state    api.ConnState
	log      *slog.Logger

	// ctx is cancelled when the server starts draining (a handler parked
	// on a long wait returns its answer now) or the connection is
	// force-closed (the answer is then never written).
	ctx    context.Context
	cancel context.CancelFunc

	out  chan outgoing
	sent chan error

	mu sync.Mutex
	// draining: read no further request (graceful shutdown).
	draining bool
}

// outgoing is a response handed from the reader to the writer.
type outgoing struct {
	correlationID int32
	flexible      bool
	resp          api.Response
}

func newConn(s *Server, listener string, registry *api.Registry, nc net.Conn) *conn {
	ctx, cancel := context.WithCancel(s.draining)
	return &conn{
		srv:      s,
		registry: registry,
		nc:       nc,
		listener: listener,
		state:    api.ConnState{Listener: listener, RemoteAddr: nc.RemoteAddr(), LocalAddr: nc.LocalAddr()},
		log:      s.log.With("listener", listener, "remote", nc.RemoteAddr().String()),
		ctx:      ctx,
		cancel:   cancel,
		out:      make(chan outgoing),
		sent:     make(chan error),
	}
}

// serve runs the connection until the client leaves, a protocol error or
// shutdown; it owns the writer goroutine and closes the socket.
func (c *conn) serve() {
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		c.writeLoop()
	}()
	c.readLoop()
	close(c.out)
	<-writerDone
	c.cancel()
	c.nc.Close()
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
	c.nc.SetDeadline(time.Now())
	c.cancel()
}

// armRead sets the idle deadline for the next request, unless draining.
func (c *conn) armRead() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.draining {
		return false
	}
	c.nc.SetReadDeadline(time.Now().Add(c.srv.opts.IdleTimeout))
	return true
}

func (c *conn) isDraining() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.draining
}

func (c *conn) readLoop() {
	br := bufio.NewReaderSize(c.nc, 8<<10)
	// reusable is the previous frame's buffer when nothing can still refer
	// to it (see frameReusableAfter); otherwise nil and the next frame gets
	// a fresh one. Under a produce load this removes the largest allocation
	// of the broker (one frame per request).
	var reusable []byte
	for c.armRead() {
		frame, err := protocol.ReadFrame(br, c.srv.opts.MaxRequestSize, reusable)
		if err != nil {
			c.readFailed(err)
			return
		}
		reusable = nil
		if !c.serveRequest(frame) {
			return
		}
		if len(frame) >= 2 && frameReusableAfter(int16(binary.BigEndian.Uint16(frame))) && cap(frame) <= maxRetainedReadBuffer {
			reusable = frame[:0]
		}
	}
}

// maxRetainedReadBuffer bounds the request buffer a connection keeps between
// requests, as maxRetainedWriteBuffer does for responses.
const maxRetainedReadBuffer = 1 << 20

// frameReusableAfter reports whether a request of this key leaves nothing
// referring to its frame once its response is written (serveRequest returns
// only then). kmsg copies strings out of the frame but byte fields alias it,
// so a key qualifies only when its handler is known to keep none of them:
// Produce (the records are written to the log before the answer; the log
// keeps no reference) and Fetch (no byte fields). Any other key (group
// metadata and assignments are kept by the coordinator) gets a fresh buffer
// for the next request.
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
	arrived := time.Now()
	m := c.srv.metrics
	m.bytesIn.WithLabelValues(c.listener).Add(float64(len(frame) + 4))
	header, body, err := protocol.ParseRequestHeader(frame)
	if err != nil {
		c.closeFor(header, reasonFor(err), err)
		return false
	}
	resp, err := c.registry.Serve(c.ctx, &c.state, header, body)
	switch {
	case err != nil:
		c.closeFor(header, reasonFor(err), err)
		return false
	case !resp.Valid():
		c.closeFor(header, reasonHandler, fmt.Errorf("handler for api key %d returned no response kind", header.APIKey))
		return false
	case resp.CloseReason() != nil:
		c.closeFor(header, reasonHandler, resp.CloseReason())
		return false
	}
	name := requestName(header.APIKey)
	m.requests.WithLabelValues(name, c.versionLabel(header)).Inc()
	if !c.respond(header, resp) {
		return false
	}
	m.latency.WithLabelValues(name).Observe(time.Since(arrived).Seconds())
	return true
}

// respond hands the response to the writer and waits until it is written.
func (c *conn) respond(h protocol.RequestHeader, resp api.Response) bool {
	if resp.IsNoResponse() {
		return true
	}
	c.out <- outgoing{
		correlationID: h.CorrelationID,
		flexible:      protocol.ResponseHeaderFlexible(h.APIKey, h.APIVersion),
		resp:          resp,
	}
	if err := <-c.sent; err != nil {
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

func (c *conn) writeLoop() {
	var buf []byte
	for o := range c.out {
		n, err := c.write(o, &buf)
		if cap(buf) > maxRetainedWriteBuffer {
			buf = nil
		}
		c.srv.metrics.bytesOut.WithLabelValues(c.listener).Add(float64(n))
		c.sent <- err
	}
}

func (c *conn) write(o outgoing, buf *[]byte) (int64, error) {
	if body := o.resp.Body(); body != nil {
		*buf = protocol.AppendResponseFrame((*buf)[:0], o.correlationID, o.flexible, body)
		n, err := c.nc.Write(*buf)
		return int64(n), err
	}
	stream := o.resp.StreamBody()
	size := int64(protocol.ResponseHeaderSize(o.flexible)) + stream.Len()
	if size > math.MaxInt32 {
		return 0, fmt.Errorf("response of %d bytes exceeds the protocol's frame limit", size)
	}
	head := make([]byte, 4, 9)
	protocol.PutFrameSize(head, 0, int(size))
	head = protocol.AppendResponseHeader(head, o.correlationID, o.flexible)
	return stream.WriteFrame(c.nc, head)
}

// versionLabel labels served versions by number and every other version
// (ApiVersions' KIP-511 answers) as "unsupported", keeping labels bounded.
func (c *conn) versionLabel(h protocol.RequestHeader) string {
	if v, ok := c.registry.Supported(h.APIKey); ok && h.APIVersion >= v.Min && h.APIVersion <= v.Max {
		return versionLabel(h.APIVersion)
	}
	return "unsupported"
}
