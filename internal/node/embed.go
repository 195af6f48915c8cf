package node

// This file holds the options an embedding (the public sluicetest package)
// sets on a node it runs in its own process: none is reachable from
// server.properties, and a node built without them behaves as before.

import (
	"context"
	"net"
	"sync/atomic"
	"time"

	"github.com/sluice-io/sluice/internal/api"
	"github.com/sluice-io/sluice/internal/vfs"
)

// Option changes how New builds a node.
type Option func(*Node)

// WithFS stores the node's log dirs and metadata log in fsys instead of
// the operating system's file system (an in-memory one with crash
// simulation, or one failing operations on demand). The log dir locks stay
// on the operating system's file system.
func WithFS(fsys vfs.FS) Option { return func(n *Node) { n.fsys = fsys } }

// RequestHook sees each decoded request before its handler: handled=true
// answers with resp instead (which may close the connection or send
// nothing); false lets the handler serve it.
type RequestHook func(ctx context.Context, req *api.Request) (resp api.Response, handled bool)

// WithRequestHook puts hook in front of every handler of the node's
// listeners, the CONTROLLER listener's included.
func WithRequestHook(hook RequestHook) Option { return func(n *Node) { n.hook = hook } }

// WithPeerDial makes the node reach its peers (raft, replica fetchers,
// forwarding) through dial on listeners without TLS, so a test can route
// node-to-node traffic through a fault proxy.
func WithPeerDial(dial func(ctx context.Context, network, addr string) (net.Conn, error)) Option {
	return func(n *Node) { n.dial = dial }
}

// WithRaftTick sets the metadata quorum's Raft tick (default 100 ms), the
// grain of its timeouts: with a short controller.quorum.election.timeout.ms
// a test cluster elects its first controller in tens of milliseconds
// instead of the default's 1 to 2 s.
func WithRaftTick(d time.Duration) Option { return func(n *Node) { n.raftTick = d } }

// WithHalt replaces the process exit a node ends with when a log dir
// failure leaves it nothing to serve (Kafka's Exit.halt): a node run in a
// test's process calls halt instead, which must stop it without waiting
// for it (halt runs on the node's own goroutine).
func WithHalt(halt func()) Option { return func(n *Node) { n.halt = halt } }

// embedding is the state the options set; its zero value changes nothing.
type embedding struct {
	hook     RequestHook
	raftTick time.Duration
	halt     func()
	dial     func(ctx context.Context, network, addr string) (net.Conn, error)
	// abrupt makes the stop skip the controlled shutdown (StopAbruptly).
	abrupt atomic.Bool
}

// StopAbruptly makes the node's coming stop send no controlled shutdown to
// the controller, as a killed process sends none: the controller learns of
// it only when its session times out.
func (n *Node) StopAbruptly() { n.abrupt.Store(true) }

// hooked wraps every handler of hs with the node's request hook, if any.
func (n *Node) hooked(hs []api.Handler) []api.Handler {
	if n.hook == nil {
		return hs
	}
	out := make([]api.Handler, len(hs))
	for i, h := range hs {
		serve := h.Handle
		h.Handle = func(ctx context.Context, req *api.Request) api.Response {
			if resp, handled := n.hook(ctx, req); handled {
				return resp
			}
			return serve(ctx, req)
		}
		out[i] = h
	}
	return out
}
