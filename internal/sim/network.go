package sim

import (
	"container/heap"
	"math/rand/v2"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-io/sluice/internal/quorum"
)

// network is the simulation's in-memory network: every message gets a
// delivery time drawn from the seeded PRNG, may be dropped, and is lost
// when its link is cut or its receiver is down at delivery. Ties are
// broken by send order, so delivery is a pure function of the seed.
type network struct {
	rng      *rand.Rand
	now      func() time.Time
	dropRate float64
	maxDelay time.Duration
	cut      map[[2]int32]bool // directed links that lose messages
	queue    msgQueue
	seq      uint64
	// snapshotLost tells a sender's voter its snapshot did not reach the peer.
	snapshotLost func(from, to int32)
}

type inFlight struct {
	at   time.Time
	seq  uint64
	from int32
	msg  *raftpb.Message
}

type msgQueue []inFlight

func (q msgQueue) Len() int { return len(q) }
func (q msgQueue) Less(i, j int) bool {
	if !q[i].at.Equal(q[j].at) {
		return q[i].at.Before(q[j].at)
	}
	return q[i].seq < q[j].seq
}
func (q msgQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *msgQueue) Push(x any)   { *q = append(*q, x.(inFlight)) }
func (q *msgQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// transport returns the quorum.Transport of one voter.
func (n *network) transport(from int32) quorum.Transport { return simTransport{n: n, from: from} }

type simTransport struct {
	n    *network
	from int32
}

// Send copies each message (the receiver must not share the sender's log)
// and schedules or drops it.
func (t simTransport) Send(msgs []*raftpb.Message) {
	n := t.n
	for _, m := range msgs {
		to := quorum.NodeID(m.GetTo())
		if n.rng.Float64() < n.dropRate {
			n.lost(t.from, to, m)
			continue
		}
		delay := time.Millisecond + time.Duration(n.rng.Int64N(int64(n.maxDelay)))
		n.seq++
		heap.Push(&n.queue, inFlight{at: n.now().Add(delay), seq: n.seq, from: t.from, msg: proto.Clone(m).(*raftpb.Message)})
	}
}

// lost accounts for a message that will not arrive.
func (n *network) lost(from, to int32, m *raftpb.Message) {
	if m.GetType() == raftpb.MsgSnap {
		n.snapshotLost(from, to)
	}
}

// due pops the next message due by now, if any.
func (n *network) due() (inFlight, bool) {
	if n.queue.Len() == 0 || n.queue[0].at.After(n.now()) {
		return inFlight{}, false
	}
	return heap.Pop(&n.queue).(inFlight), true
}

func (n *network) isCut(from, to int32) bool { return n.cut[[2]int32{from, to}] }

// partition cuts every link between the two groups.
func (n *network) partition(a, b []int32) {
	for _, x := range a {
		for _, y := range b {
			n.cut[[2]int32{x, y}], n.cut[[2]int32{y, x}] = true, true
		}
	}
}

func (n *network) heal() { n.cut = map[[2]int32]bool{} }
