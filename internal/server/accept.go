package server

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/netip"
	"syscall"
	"time"

	"github.com/sluice-io/sluice/internal/auth"
)

// Accept errors back off as net/http's Server does: 5 ms, doubling, at
// most 1 s, reset by the next accepted connection.
const (
	acceptBackoffMin = 5 * time.Millisecond
	acceptBackoffMax = time.Second
)

// accept runs one listener's acceptor until Shutdown. An accept that fails
// (out of file descriptors, kernel buffers or memory, an aborted handshake)
// is counted, logged and retried after a pause, as Kafka's acceptor and
// net/http do: a node out of file descriptors for a while serves again once
// some are released, rather than never again.
func (s *Server) accept(l Listener, ln net.Listener) {
	defer s.acceptors.Done()
	var backoff time.Duration
	for {
		if !s.waitForSlot(l.Name, false) {
			return
		}
		nc, err := ln.Accept()
		if err != nil {
			// A connection's release wakes the pause below: the descriptor
			// it frees may be the one accept lacked.
			released := s.quotas.changedCh()
			if s.isStopping() {
				return
			}
			if errors.Is(err, net.ErrClosed) {
				s.log.Error("listener closed while serving; acceptor stopped", "listener", l.Name, "err", err)
				return
			}
			backoff = min(max(2*backoff, acceptBackoffMin), acceptBackoffMax)
			s.acceptFailed(l.Name, err, backoff)
			if !s.pause(backoff, released) {
				return
			}
			continue
		}
		backoff = 0
		if !s.waitForSlot(l.Name, true) {
			nc.Close()
			return
		}
		s.admit(l, nc)
	}
}

// waitForSlot waits for a connection slot at max.connections, counting the
// time blocked, and takes it if take; false means the server stopped.
func (s *Server) waitForSlot(listener string, take bool) bool {
	blocked, ok := s.quotas.acquireSlot(listener, s.stopped, take)
	if blocked > 0 {
		s.metrics.acceptorBlocked.WithLabelValues(listener).Add(blocked.Seconds())
	}
	return ok
}

// acceptFailed counts and logs a failed accept about to be retried.
func (s *Server) acceptFailed(listener string, err error, backoff time.Duration) {
	kind := acceptErrorKind(err)
	s.metrics.acceptErrors.WithLabelValues(listener, kind).Inc()
	s.log.Warn("accept failed; retrying", "listener", listener, "error", kind, "retry_in", backoff, "err", err)
}

// pause waits d on the server's clock, or until a connection is released or
// the server stops; false means stopped.
func (s *Server) pause(d time.Duration, released <-chan struct{}) bool {
	t := s.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-released:
		return true
	case <-s.stopped:
		return false
	}
}

// acceptErrorKind labels an accept error with a bounded set of values.
func acceptErrorKind(err error) string {
	for _, e := range []struct {
		errno syscall.Errno
		name  string
	}{
		{syscall.EMFILE, "EMFILE"},
		{syscall.ENFILE, "ENFILE"},
		{syscall.ENOBUFS, "ENOBUFS"},
		{syscall.ENOMEM, "ENOMEM"},
		{syscall.ECONNABORTED, "ECONNABORTED"},
	} {
		if errors.Is(err, e.errno) {
			return e.name
		}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timeout"
	}
	return "other"
}

// admit applies the per-address limit to an accepted connection and starts
// serving it, or hands it to the protocol sharing the listener.
func (s *Server) admit(l Listener, nc net.Conn) {
	ip := remoteIP(nc)
	if limit, ok := s.quotas.admit(ip); !ok {
		s.metrics.rejected.WithLabelValues(l.Name, rejectPerIP).Inc()
		s.log.Info("rejected connection: address already has the configured maximum of connections",
			"listener", l.Name, "address", ip.String(), "max", limit)
		nc.Close()
		s.quotas.release(netip.Addr{})
		return
	}
	switch {
	case l.TLS != nil:
		s.handshake(l, nc, ip)
		return
	case l.Divert != nil && l.SASL == nil:
		s.connections.Add(1)
		go func() {
			defer s.connections.Done()
			s.peekConn(l, nc, ip, auth.Anonymous)
		}()
		return
	}
	s.startConn(l, nc, ip, auth.Anonymous)
	if l.Name == s.quotas.protected {
		s.evictExcess()
	}
}

// evictExcess closes the least recently active connections of the other
// listeners while inter-broker connections keep the server past
// max.connections, as Kafka's processors do.
func (s *Server) evictExcess() {
	for s.quotas.reserveEviction() {
		s.mu.Lock()
		var lru *conn
		for c := range s.conns {
			if c.listener == s.quotas.protected || c.evicted {
				continue
			}
			if lru == nil || c.lastActive.Load() < lru.lastActive.Load() {
				lru = c
			}
		}
		if lru != nil {
			lru.evicted = true
		}
		s.mu.Unlock()
		if lru == nil {
			s.quotas.cancelEviction()
			return
		}
		s.metrics.rejected.WithLabelValues(lru.listener, rejectMaxConnections).Inc()
		lru.log.Info("closing the least recently active connection: inter-broker connections took the broker past max.connections")
		lru.forceClose()
	}
}

// peekConn reads the first bytes of a connection on a listener shared with
// another protocol (after the TLS handshake on a TLS listener, so the raft
// RPC is encrypted too) and hands it to that protocol's server or to ours.
// It runs on a goroutine of its own, counted in s.connections.
func (s *Server) peekConn(l Listener, nc net.Conn, ip netip.Addr, principal auth.Principal) {
	peeked := make([]byte, l.Divert.PrefixLen)
	nc.SetReadDeadline(time.Now().Add(divertPeekTimeout))
	if _, err := io.ReadFull(nc, peeked); err != nil {
		nc.Close()
		s.quotas.release(ip)
		return
	}
	nc.SetReadDeadline(time.Time{})
	if l.Divert.Match(peeked) {
		s.quotas.release(ip)
		go l.Divert.Serve(nc, peeked)
		return
	}
	s.startConn(l, &prefixedConn{Conn: nc, r: io.MultiReader(bytes.NewReader(peeked), nc)}, ip, principal)
}

// prefixedConn replays bytes read while peeking before the rest of the stream.
type prefixedConn struct {
	net.Conn
	r io.Reader
}

func (p *prefixedConn) Read(b []byte) (int, error) { return p.r.Read(b) }
