package quorum

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-io/sluice/internal/kafka"
)

// peerSender owns the outbound connection to one peer: it dials (with
// backoff after failures), says hello, and writes queued messages in order.
// Messages queued while the peer is down are dropped; Raft retransmits.
type peerSender struct {
	t     *TCPTransport
	id    int32
	addr  string
	queue chan *raftpb.Message
	// dir is the peer's directory id (dynamic quorums: the hello names it);
	// stop ends this sender alone (the peer left the voter set).
	dir  kafka.UUID
	stop chan struct{}
}

func (p *peerSender) run() {
	defer p.t.wg.Done()
	backoff := p.t.opts.BackoffMin
	var conn net.Conn
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	for {
		if conn == nil {
			c, err := p.dial()
			if err != nil {
				p.t.log.Debug("raft peer unreachable", "peer", p.id, "addr", p.addr, "err", err)
				p.reportUnreachable()
				p.dropQueued()
				select {
				case <-p.t.stopc:
					return
				case <-p.stop:
					return
				case <-time.After(backoff):
				}
				backoff = min(2*backoff, p.t.opts.BackoffMax)
				continue
			}
			conn, backoff = c, p.t.opts.BackoffMin
		}
		var m *raftpb.Message
		select {
		case <-p.t.stopc:
			return
		case <-p.stop:
			return
		case m = <-p.queue:
		}
		if err := p.write(conn, m); err != nil {
			p.t.log.Debug("raft peer connection lost", "peer", p.id, "err", err)
			conn.Close()
			conn = nil
			p.dropped(m)
			p.reportUnreachable()
			continue
		}
		if m.GetType() == raftpb.MsgSnap {
			p.report(func(l LocalVoter) { l.ReportSnapshot(p.id, false) })
		}
	}
}

// dial connects and exchanges hellos; a refusal is logged as an error with
// the peer's reason, since it needs an operator (cluster id or voters).
func (p *peerSender) dial() (net.Conn, error) {
	ctx, cancel := context.WithTimeout(p.t.stopCtx, p.t.opts.DialTimeout)
	defer cancel()
	nc, err := p.t.opts.Dial(ctx, "tcp", p.addr)
	if err != nil {
		return nil, err
	}
	nc.SetDeadline(time.Now().Add(p.t.opts.DialTimeout))
	h := hello{version: rpcVersion, clusterID: p.t.opts.ClusterID, voters: p.t.helloVoters(p.dir), from: p.t.opts.NodeID, to: p.id}
	if err := writeFrame(nc, h.encode()); err != nil {
		nc.Close()
		return nil, fmt.Errorf("send hello: %w", err)
	}
	f, err := readFrame(bufio.NewReaderSize(nc, 512), maxHelloBytes)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("read hello reply: %w", err)
	}
	status, reason, err := decodeHelloReply(f)
	if err != nil {
		nc.Close()
		return nil, err
	}
	if status != helloAccepted {
		nc.Close()
		p.t.log.Error("raft peer refused this node", "peer", p.id, "addr", p.addr, "reason", reason)
		p.t.refused(p.id, reason)
		return nil, fmt.Errorf("refused by node %d: %s", p.id, reason)
	}
	p.t.noteAccepted(p.id)
	nc.SetDeadline(time.Time{})
	return nc, nil
}

func (p *peerSender) write(nc net.Conn, m *raftpb.Message) error {
	data, err := proto.Marshal(m)
	if err != nil {
		return fmt.Errorf("marshal %s: %w", m.GetType(), err)
	}
	nc.SetWriteDeadline(time.Now().Add(p.t.opts.WriteTimeout))
	return writeMessage(nc, data)
}

// dropQueued empties the queue while the peer is unreachable.
func (p *peerSender) dropQueued() {
	for {
		select {
		case m := <-p.queue:
			p.dropped(m)
		default:
			return
		}
	}
}

// dropped tells Raft a snapshot did not go, so it retries later instead of
// waiting for it forever.
func (p *peerSender) dropped(m *raftpb.Message) {
	if m.GetType() == raftpb.MsgSnap {
		p.report(func(l LocalVoter) { l.ReportSnapshot(p.id, true) })
	}
}

func (p *peerSender) reportUnreachable() {
	p.report(func(l LocalVoter) { l.ReportUnreachable(p.id) })
}

func (p *peerSender) report(f func(LocalVoter)) {
	p.t.mu.Lock()
	local := p.t.local
	p.t.mu.Unlock()
	if local != nil {
		f(local)
	}
}
