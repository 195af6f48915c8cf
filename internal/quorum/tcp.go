package quorum

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-io/sluice/internal/kafka"
)

// LocalVoter is what a TCPTransport delivers to: the Driver.
type LocalVoter interface {
	Step(msg *raftpb.Message)
	ReportUnreachable(nodeID int32)
	ReportSnapshot(nodeID int32, failed bool)
}

// TCPOptions configure a TCPTransport.
type TCPOptions struct {
	// ClusterID is the cluster's id (meta.properties): a peer of another
	// cluster is refused.
	ClusterID string
	// NodeID is this voter.
	NodeID int32
	// Voters maps every voter's node id to its CONTROLLER listener address
	// (controller.quorum.voters). A peer whose list differs is refused.
	Voters map[int32]string
	// Dynamic: a dynamic quorum (tcp_dynamic.go). Voters is then only the
	// first set of peers, SetMembers replaces it, and a hello is refused
	// only for another cluster or another directory id (DirectoryID, this
	// node's metadata log directory id).
	Dynamic     bool
	DirectoryID kafka.UUID
	// Advertised is this node's CONTROLLER address, which a dynamic hello
	// carries so a node that does not know the sender yet can answer it.
	Advertised string
	// QueueSize bounds the messages queued per peer (default 1024); more
	// are dropped, which Raft tolerates.
	QueueSize int
	// DialTimeout bounds a connection attempt and its hello (default 2s);
	// WriteTimeout one frame's write (default 5s).
	DialTimeout  time.Duration
	WriteTimeout time.Duration
	// BackoffMin and BackoffMax bound the doubling wait between failed
	// connection attempts (defaults 50 ms and 2 s).
	BackoffMin, BackoffMax time.Duration
	// MaxMessageBytes bounds one message received in chunks (a snapshot;
	// default 1 GiB).
	MaxMessageBytes int
	// MaxRefusals is how many refusals in a row make a peer count as
	// refusing this node (default DefaultMaxRefusals); OnRefused, when
	// set, is called once when the refusing peers leave this node no
	// majority (tcp_refusal.go). It runs on a sender goroutine and must
	// not call Stop.
	MaxRefusals int
	OnRefused   func(*RefusedError)
	// Dial connects to a peer; nil means plain TCP. A CONTROLLER listener
	// over TLS gives a dial that completes the TLS handshake (the peer's
	// server diverts raft connections after its handshake); the context
	// bounds the attempt with DialTimeout.
	Dial   func(ctx context.Context, network, addr string) (net.Conn, error)
	Logger *slog.Logger
}

// VoterString renders a voter map as controller.quorum.voters does
// ("1@host:9093,2@host:9093"), in id order: the form peers compare.
func VoterString(voters map[int32]string) string {
	var parts []string
	for _, id := range slices.Sorted(maps.Keys(voters)) {
		parts = append(parts, strconv.Itoa(int(id))+"@"+voters[id])
	}
	return strings.Join(parts, ",")
}

// TCPTransport carries Raft messages between voters over TCP: one sender
// goroutine per peer with a bounded queue and its own outbound connection
// (reconnected with backoff), and inbound connections read by ServeConn.
// Start attaches the local voter; Stop ends every goroutine it started.
type TCPTransport struct {
	opts   TCPOptions
	log    *slog.Logger
	voters string

	mu      sync.Mutex
	local   LocalVoter
	started bool
	closed  bool
	inbound map[net.Conn]struct{}
	lns     []net.Listener
	// refusals counts the peers' refusals of this node's hello.
	refusals peerRefusals

	// peers is guarded by mu (a dynamic quorum changes it).
	peers map[uint64]*peerSender
	stopc chan struct{}
	// stopCtx ends with Stop, so a dial in progress does not hold Stop up.
	stopCtx    context.Context
	cancelStop context.CancelFunc
	wg         sync.WaitGroup
}

// NewTCPTransport builds the transport; nothing runs until Start.
func NewTCPTransport(opts TCPOptions) (*TCPTransport, error) {
	if _, ok := opts.Voters[opts.NodeID]; !ok && !opts.Dynamic {
		return nil, fmt.Errorf("quorum: node %d is not among the voters %s", opts.NodeID, VoterString(opts.Voters))
	}
	if opts.QueueSize <= 0 {
		opts.QueueSize = 1024
	}
	if opts.DialTimeout <= 0 {
		opts.DialTimeout = 2 * time.Second
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = 5 * time.Second
	}
	if opts.BackoffMin <= 0 {
		opts.BackoffMin = 50 * time.Millisecond
	}
	if opts.BackoffMax < opts.BackoffMin {
		opts.BackoffMax = max(2*time.Second, opts.BackoffMin)
	}
	if opts.MaxRefusals <= 0 {
		opts.MaxRefusals = DefaultMaxRefusals
	}
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = 1 << 30
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Dial == nil {
		opts.Dial = (&net.Dialer{}).DialContext
	}
	t := &TCPTransport{
		opts: opts, log: opts.Logger.With("component", "quorum-transport", "node", opts.NodeID),
		voters: VoterString(opts.Voters), inbound: map[net.Conn]struct{}{},
		peers: map[uint64]*peerSender{}, stopc: make(chan struct{}),
	}
	t.stopCtx, t.cancelStop = context.WithCancel(context.Background())
	for id, addr := range opts.Voters {
		if id != opts.NodeID {
			t.peers[RaftID(id)] = t.newPeer(id, addr, kafka.UUID{})
		}
	}
	return t, nil
}

// Start attaches the local voter and starts one sender per peer.
func (t *TCPTransport) Start(local LocalVoter) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.started || t.closed {
		return
	}
	t.started, t.local = true, local
	for _, p := range t.peers {
		t.wg.Add(1)
		go p.run()
	}
}

// Send queues messages for their peers; a full queue drops the message
// (a dropped snapshot is reported failed so Raft sends it again).
func (t *TCPTransport) Send(msgs []*raftpb.Message) {
	for _, m := range msgs {
		t.mu.Lock()
		p, ok := t.peers[m.GetTo()]
		t.mu.Unlock()
		if !ok {
			continue
		}
		select {
		case p.queue <- m:
		default:
			p.dropped(m)
		}
	}
}

// Serve accepts connections on ln (a listener of its own, when the
// CONTROLLER port is not shared with Kafka requests) until Stop.
func (t *TCPTransport) Serve(ln net.Listener) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		ln.Close()
		return
	}
	t.lns = append(t.lns, ln)
	t.wg.Add(1)
	t.mu.Unlock()
	go func() {
		defer t.wg.Done()
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			t.wg.Add(1)
			go func() {
				defer t.wg.Done()
				t.ServeConn(nc, nil)
			}()
		}
	}()
}

// ServeConn reads a peer's connection until it closes, the peer misbehaves
// or the transport stops; it closes nc. peeked holds bytes already read from
// nc by a listener that looked at the prefix (IsRPCPrefix).
func (t *TCPTransport) ServeConn(nc net.Conn, peeked []byte) {
	defer nc.Close()
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	t.inbound[nc] = struct{}{}
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		delete(t.inbound, nc)
		t.mu.Unlock()
	}()
	r := io.MultiReader(bytes.NewReader(peeked), nc)
	nc.SetReadDeadline(time.Now().Add(t.opts.DialTimeout))
	f, err := readFrame(r, maxHelloBytes)
	if err != nil {
		t.log.Warn("raft peer connection without a valid hello", "remote", nc.RemoteAddr().String(), "err", err)
		return
	}
	h, err := decodeHello(f)
	if err != nil {
		t.log.Warn("raft peer connection without a valid hello", "remote", nc.RemoteAddr().String(), "err", err)
		return
	}
	nc.SetWriteDeadline(time.Now().Add(t.opts.WriteTimeout))
	if reason := t.refusal(h); reason != "" {
		t.log.Error("refused a raft peer", "remote", nc.RemoteAddr().String(), "peer", h.from, "reason", reason)
		writeFrame(nc, encodeHelloReply(helloRefused, reason))
		return
	}
	if err := writeFrame(nc, encodeHelloReply(helloAccepted, "")); err != nil {
		return
	}
	if t.opts.Dynamic {
		t.learnPeer(h)
	}
	nc.SetReadDeadline(time.Time{})
	t.mu.Lock()
	local := t.local
	t.mu.Unlock()
	for {
		data, err := readMessage(r, t.opts.MaxMessageBytes)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				t.log.Warn("raft peer connection closed", "peer", h.from, "err", err)
			}
			return
		}
		m := &raftpb.Message{}
		if err := proto.Unmarshal(data, m); err != nil {
			t.log.Warn("raft peer sent a malformed message; closing", "peer", h.from, "err", err)
			return
		}
		if m.GetFrom() != RaftID(h.from) || m.GetTo() != RaftID(t.opts.NodeID) {
			t.log.Warn("raft peer sent a message of another sender or receiver; closing", "peer", h.from, "from", NodeID(m.GetFrom()), "to", NodeID(m.GetTo()))
			return
		}
		if local != nil {
			local.Step(m)
		}
	}
}

// refusal says why a hello is refused ("" when accepted).
func (t *TCPTransport) refusal(h hello) string {
	switch {
	case h.version != rpcVersion:
		return fmt.Sprintf("raft RPC version %d, this node speaks %d", h.version, rpcVersion)
	case h.clusterID != t.opts.ClusterID:
		return fmt.Sprintf("node %d's cluster id %q disagrees with node %d's %q", h.from, h.clusterID, t.opts.NodeID, t.opts.ClusterID)
	case h.to != t.opts.NodeID:
		return fmt.Sprintf("addressed to node %d, this is node %d", h.to, t.opts.NodeID)
	case t.opts.Dynamic:
		return t.dynamicRefusal(h)
	case h.voters != t.voters:
		return fmt.Sprintf("node %d's controller.quorum.voters %q disagrees with node %d's %q", h.from, h.voters, t.opts.NodeID, t.voters)
	case h.from == t.opts.NodeID || t.opts.Voters[h.from] == "":
		return fmt.Sprintf("node %d is not another voter", h.from)
	}
	return ""
}

// Stop closes the listeners and connections and waits for every goroutine.
func (t *TCPTransport) Stop() {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	t.closed = true
	close(t.stopc)
	t.cancelStop()
	for _, ln := range t.lns {
		ln.Close()
	}
	for nc := range t.inbound {
		nc.Close()
	}
	t.mu.Unlock()
	t.wg.Wait()
}
