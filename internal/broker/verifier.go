package broker

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/coordinator/txn"
	"github.com/sluice-io/sluice/internal/coordinator/txncoord"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/replication"
)

// LocalTxnCoordinator is this broker's transaction coordinator as the
// verifier uses it (*txncoord.TransactionCoordinator).
type LocalTxnCoordinator interface {
	PartitionFor(transactionalID string) int32
	Verify(ctx context.Context, req txn.VerifyRequest) []int16
	AddPartitions(ctx context.Context, req txn.AddPartitionsRequest) int16
}

var _ LocalTxnCoordinator = (*txncoord.TransactionCoordinator)(nil)

// PeerRequester sends a request to another broker (transport.Pool).
type PeerRequester interface {
	Request(ctx context.Context, addr string, req kmsg.Request) (kmsg.Response, error)
}

// TxnVerifierOptions configure a TxnVerifier.
type TxnVerifierOptions struct {
	NodeID int32
	// Image is the published metadata image: the leader of a transactional
	// id's __transaction_state partition is its coordinator.
	Image func() *metadata.Image
	// Listener is the inter-broker listener other coordinators are
	// reached on.
	Listener string
	// Local is this broker's transaction coordinator.
	Local LocalTxnCoordinator
	// Peers reaches other brokers; nil on a single node.
	Peers PeerRequester
	// RequestTimeout bounds one AddPartitionsToTxn (0: 30 s,
	// request.timeout.ms).
	RequestTimeout time.Duration
	Logger         *slog.Logger
}

// TxnVerifier asks a producer's transaction coordinator whether partitions
// are in its ongoing transaction, or adds them under Transactions V2
// (replication.TxnVerifier; Kafka's AddPartitionsToTxnManager). The local
// coordinator is called directly; other coordinators get AddPartitionsToTxn
// v5, one request in flight per coordinator broker, the transactions that
// arrive meanwhile batched into the next.
type TxnVerifier struct {
	opts   TxnVerifierOptions
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu struct {
		sync.Mutex
		nodes  map[int32]*verifyNode
		closed bool
	}
}

var _ replication.TxnVerifier = (*TxnVerifier)(nil)

// verifyNode is one coordinator broker's transactions waiting for its next
// request, at most one per transactional id.
type verifyNode struct {
	waiting  map[string]*pendingVerify
	inflight bool
}

type pendingVerify struct {
	txn   kmsg.AddPartitionsToTxnRequestTransaction
	parts []kafka.TopicPartition
	done  chan map[kafka.TopicPartition]int16
}

// NewTxnVerifier returns a verifier; Close stops its requests.
func NewTxnVerifier(opts TxnVerifierOptions) *TxnVerifier {
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = 30 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	v := &TxnVerifier{opts: opts}
	v.ctx, v.cancel = context.WithCancel(context.Background())
	v.mu.nodes = make(map[int32]*verifyNode)
	return v
}

// Close fails the verifications waiting and in flight and waits for the
// requests to end.
func (v *TxnVerifier) Close() {
	v.mu.Lock()
	v.mu.closed = true
	v.mu.Unlock()
	v.cancel()
	v.wg.Wait()
}

// VerifyTransaction implements replication.TxnVerifier.
func (v *TxnVerifier) VerifyTransaction(ctx context.Context, req replication.VerifyRequest) map[kafka.TopicPartition]int16 {
	coordinator, ok := v.coordinator(req.TransactionalID)
	switch {
	case !ok:
		return allCodes(req.Partitions, kerr.CoordinatorNotAvailable.Code)
	case coordinator == v.opts.NodeID:
		return v.local(ctx, req)
	}
	p := &pendingVerify{txn: verifyTransaction(req), parts: req.Partitions, done: make(chan map[kafka.TopicPartition]int16, 1)}
	v.enqueue(coordinator, p)
	select {
	case codes := <-p.done:
		return codes
	case <-ctx.Done():
		return allCodes(req.Partitions, kerr.NetworkException.Code)
	}
}

// coordinator is the leader of the id's __transaction_state partition, if
// it is a live broker on the inter-broker listener.
func (v *TxnVerifier) coordinator(transactionalID string) (int32, bool) {
	im := v.opts.Image()
	tp := kafka.TopicPartition{Topic: txncoord.TransactionStateTopic, Partition: v.opts.Local.PartitionFor(transactionalID)}
	st, ok := im.Partition(tp)
	if !ok || st.Leader < 0 {
		return 0, false
	}
	if st.Leader == v.opts.NodeID {
		return st.Leader, true
	}
	b, ok := im.Broker(st.Leader)
	if !ok || b.Fenced || v.opts.Peers == nil {
		return 0, false
	}
	_, ok = replication.BrokerAddress(im, st.Leader, v.opts.Listener)
	return st.Leader, ok
}

// local asks this broker's coordinator.
func (v *TxnVerifier) local(ctx context.Context, req replication.VerifyRequest) map[kafka.TopicPartition]int16 {
	if req.AddPartitions {
		code := v.opts.Local.AddPartitions(ctx, txn.AddPartitionsRequest{TransactionalID: req.TransactionalID,
			ProducerID: req.ProducerID, ProducerEpoch: req.ProducerEpoch, Partitions: req.Partitions,
			ClientTransactionVersion: txn.TV2})
		return allCodes(req.Partitions, code)
	}
	codes := v.opts.Local.Verify(ctx, txn.VerifyRequest{TransactionalID: req.TransactionalID,
		ProducerID: req.ProducerID, ProducerEpoch: req.ProducerEpoch, Partitions: req.Partitions})
	out := make(map[kafka.TopicPartition]int16, len(codes))
	for i, tp := range req.Partitions {
		out[tp] = codes[i]
	}
	return out
}

// enqueue adds p to the coordinator's next request, as Kafka's addTxnData:
// a transaction of the same id already waiting is answered
// INVALID_PRODUCER_EPOCH when p's epoch is higher (it is fenced),
// NETWORK_EXCEPTION when equal (a retry; the producer retries again), and
// p itself INVALID_PRODUCER_EPOCH when its epoch is lower.
func (v *TxnVerifier) enqueue(coordinator int32, p *pendingVerify) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.mu.closed {
		p.done <- allCodes(p.parts, kerr.NetworkException.Code)
		return
	}
	n, ok := v.mu.nodes[coordinator]
	if !ok {
		n = &verifyNode{waiting: make(map[string]*pendingVerify)}
		v.mu.nodes[coordinator] = n
	}
	if old, ok := n.waiting[p.txn.TransactionalID]; ok {
		if old.txn.ProducerEpoch > p.txn.ProducerEpoch {
			p.done <- allCodes(p.parts, kerr.InvalidProducerEpoch.Code)
			return
		}
		code := kerr.NetworkException.Code
		if old.txn.ProducerEpoch < p.txn.ProducerEpoch {
			code = kerr.InvalidProducerEpoch.Code
		}
		old.done <- allCodes(old.parts, code)
	}
	n.waiting[p.txn.TransactionalID] = p
	if !n.inflight {
		n.inflight = true
		v.wg.Go(func() { v.flush(coordinator, n) })
	}
}

// flush sends the coordinator's waiting transactions, one request at a
// time, until none is left.
func (v *TxnVerifier) flush(coordinator int32, n *verifyNode) {
	for {
		v.mu.Lock()
		batch := n.waiting
		n.waiting = make(map[string]*pendingVerify)
		if len(batch) == 0 || v.mu.closed {
			n.inflight = false
			v.mu.Unlock()
			for _, p := range batch {
				p.done <- allCodes(p.parts, kerr.NetworkException.Code)
			}
			return
		}
		v.mu.Unlock()
		v.send(coordinator, batch)
	}
}

// send asks the coordinator about batch and answers each transaction.
func (v *TxnVerifier) send(coordinator int32, batch map[string]*pendingVerify) {
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.SetVersion(5)
	for _, id := range slices.Sorted(maps.Keys(batch)) {
		req.Transactions = append(req.Transactions, batch[id].txn)
	}
	resp, err := v.request(coordinator, req)
	if err != nil {
		v.opts.Logger.Warn("transaction verification failed", "coordinator", coordinator, "err", err)
	}
	for id, p := range batch {
		p.done <- verifyCodes(p, id, resp, err)
	}
}

func (v *TxnVerifier) request(coordinator int32, req *kmsg.AddPartitionsToTxnRequest) (*kmsg.AddPartitionsToTxnResponse, error) {
	addr, ok := replication.BrokerAddress(v.opts.Image(), coordinator, v.opts.Listener)
	if !ok || v.opts.Peers == nil {
		return nil, fmt.Errorf("broker %d has no %s endpoint", coordinator, v.opts.Listener)
	}
	ctx, cancel := context.WithTimeout(v.ctx, v.opts.RequestTimeout)
	defer cancel()
	resp, err := v.opts.Peers.Request(ctx, addr, req)
	if err != nil {
		return nil, fmt.Errorf("AddPartitionsToTxn to broker %d at %s: %w", coordinator, addr, err)
	}
	r, ok := resp.(*kmsg.AddPartitionsToTxnResponse)
	if !ok {
		return nil, fmt.Errorf("AddPartitionsToTxn to broker %d: answered %T", coordinator, resp)
	}
	return r, nil
}

// verifyCodes is one transaction's codes from the answer, as Kafka's
// AddPartitionsToTxnManager reads it: a failed request is
// NETWORK_EXCEPTION, a request-level error applies to every partition
// (CLUSTER_AUTHORIZATION_FAILED as INVALID_TXN_STATE: the producer must not
// see it), partitions the answer leaves out are COORDINATOR_NOT_AVAILABLE.
func verifyCodes(p *pendingVerify, id string, resp *kmsg.AddPartitionsToTxnResponse, err error) map[kafka.TopicPartition]int16 {
	switch {
	case err != nil:
		return allCodes(p.parts, kerr.NetworkException.Code)
	case resp.ErrorCode == kerr.ClusterAuthorizationFailed.Code:
		return allCodes(p.parts, kerr.InvalidTxnState.Code)
	case resp.ErrorCode != 0:
		return allCodes(p.parts, resp.ErrorCode)
	}
	out := allCodes(p.parts, kerr.CoordinatorNotAvailable.Code)
	for _, tr := range resp.Transactions {
		if tr.TransactionalID != id {
			continue
		}
		for _, t := range tr.Topics {
			for _, part := range t.Partitions {
				tp := kafka.TopicPartition{Topic: t.Topic, Partition: part.Partition}
				if _, asked := out[tp]; asked {
					out[tp] = part.ErrorCode
				}
			}
		}
	}
	return out
}

// verifyTransaction is req as a transaction of AddPartitionsToTxn v5:
// VerifyOnly unless it is Transactions V2's implicit add.
func verifyTransaction(req replication.VerifyRequest) kmsg.AddPartitionsToTxnRequestTransaction {
	t := kmsg.NewAddPartitionsToTxnRequestTransaction()
	t.TransactionalID, t.ProducerID, t.ProducerEpoch = req.TransactionalID, req.ProducerID, req.ProducerEpoch
	t.VerifyOnly = !req.AddPartitions
	parts := slices.Clone(req.Partitions)
	slices.SortFunc(parts, func(a, b kafka.TopicPartition) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition - b.Partition)
	})
	for _, tp := range parts {
		if n := len(t.Topics); n == 0 || t.Topics[n-1].Topic != tp.Topic {
			rt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
			rt.Topic = tp.Topic
			t.Topics = append(t.Topics, rt)
		}
		last := &t.Topics[len(t.Topics)-1]
		last.Partitions = append(last.Partitions, tp.Partition)
	}
	return t
}

func allCodes(parts []kafka.TopicPartition, code int16) map[kafka.TopicPartition]int16 {
	out := make(map[kafka.TopicPartition]int16, len(parts))
	for _, tp := range parts {
		out[tp] = code
	}
	return out
}
