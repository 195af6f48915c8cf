package cli

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// deliveryTracker follows every record handed to the client until its
// promise runs. kgo cannot fail a record it has written to a broker that
// never answered (failing it could break the idempotent producer's
// sequence numbers), so RecordDeliveryTimeout alone lets a dead broker
// hold the command for as long as it stays down; the tracker lets the
// command itself give up on a record older than --timeout. It also keeps
// what explains a failure: the last connection or request error the
// client met and the partitions of the records still waiting.
type deliveryTracker struct {
	mu     sync.Mutex
	sentAt map[uint64]time.Time // unacknowledged records by sequence number
	seqOf  map[*kgo.Record]uint64
	// partition of each unacknowledged record once kgo has partitioned it.
	partition map[*kgo.Record]int32
	next      uint64 // sequence number of the next record
	oldest    uint64 // no record below it is unacknowledged
	// brokerErr is each broker's last connection, write or read error,
	// dropped once a request to it goes through; partitionErr is each
	// partition's last error in a Produce response (retriable ones such
	// as NOT_ENOUGH_REPLICAS keep records waiting), dropped on success.
	brokerErr    map[int32]timedError
	partitionErr map[int32]error
	// failed counts the records whose promise failed, failedIn their
	// partitions: kgo fails a whole partition's records at once.
	failed   int
	failedIn map[int32]bool
}

func newDeliveryTracker() *deliveryTracker {
	return &deliveryTracker{
		sentAt:    make(map[uint64]time.Time),
		seqOf:     make(map[*kgo.Record]uint64),
		partition: make(map[*kgo.Record]int32),
		failedIn:  make(map[int32]bool),

		brokerErr:    make(map[int32]timedError),
		partitionErr: make(map[int32]error),
	}
}

// sent registers r, handed to the client at now, and returns its sequence
// number (input order).
func (d *deliveryTracker) sent(r *kgo.Record, now time.Time) uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	seq := d.next
	d.next++
	d.sentAt[seq] = now
	d.seqOf[r] = seq
	return seq
}

// done forgets r: its promise ran, delivered (err nil) or failed.
func (d *deliveryTracker) done(r *kgo.Record, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	seq, ok := d.seqOf[r]
	if !ok {
		return
	}
	if err != nil {
		d.failed++
		if p, known := d.partition[r]; known {
			d.failedIn[p] = true
		}
	}
	delete(d.seqOf, r)
	delete(d.partition, r)
	delete(d.sentAt, seq)
	for d.oldest < d.next {
		if _, waiting := d.sentAt[d.oldest]; waiting {
			break
		}
		d.oldest++
	}
}

// overdue is the error for the records still unacknowledged when the
// oldest of them was sent more than timeout before now; nil when none is.
func (d *deliveryTracker) overdue(now time.Time, timeout time.Duration) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	at, ok := d.sentAt[d.oldest]
	if !ok || now.Sub(at) < timeout {
		return nil
	}
	return d.notDeliveredLocked(timeout)
}

// notDelivered describes the records still waiting, for a deadline that
// ran out (kgo's own record timeout or the command's).
func (d *deliveryTracker) notDelivered(timeout time.Duration) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.notDeliveredLocked(timeout)
}

func (d *deliveryTracker) notDeliveredLocked(timeout time.Duration) error {
	n := len(d.sentAt) + d.failed
	noun := "records"
	if n == 1 {
		noun = "record"
	}
	var parts []int32
	for p := range d.failedIn {
		parts = append(parts, p)
	}
	for _, p := range d.partition {
		if !slices.Contains(parts, p) {
			parts = append(parts, p)
		}
	}
	slices.Sort(parts)
	where := ""
	switch {
	case len(parts) == 1:
		where = fmt.Sprintf(" to partition %d", parts[0])
	case len(parts) > 1:
		names := make([]string, len(parts))
		for i, p := range parts {
			names[i] = fmt.Sprint(p)
		}
		where = " to partitions " + strings.Join(names, ", ")
	}
	cause := d.causeLocked(parts)
	if cause == nil {
		cause = errors.New("no acknowledgement from the partition leader")
	}
	return fmt.Errorf("%d %s not delivered%s within %s: %w", n, noun, where, timeout, cause)
}

// timedError is an error and when it happened.
type timedError struct {
	err error
	at  time.Time
}

// causeLocked explains why records of parts wait: a partition's error
// from its leader first, else the latest error of a broker.
func (d *deliveryTracker) causeLocked(parts []int32) error {
	for _, p := range parts {
		if err := d.partitionErr[p]; err != nil {
			return err
		}
	}
	var latest timedError
	for _, e := range d.brokerErr {
		if latest.err == nil || e.at.After(latest.at) {
			latest = e
		}
	}
	return latest.err
}

// noteBroker keeps err (nil: a request went through) as the broker's
// state.
func (d *deliveryTracker) noteBroker(node int32, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err == nil {
		delete(d.brokerErr, node)
		return
	}
	d.brokerErr[node] = timedError{err: err, at: time.Now()}
}

// notePartition keeps the error of a partition's last Produce response
// (nil: it was accepted).
func (d *deliveryTracker) notePartition(partition int32, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err == nil {
		delete(d.partitionErr, partition)
		return
	}
	d.partitionErr[partition] = err
}

// OnBrokerConnect implements kgo.HookBrokerConnect: a failed dial is the
// usual reason records wait (the broker is down).
func (d *deliveryTracker) OnBrokerConnect(meta kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	d.noteBroker(meta.NodeID, err)
}

// OnBrokerWrite implements kgo.HookBrokerWrite.
func (d *deliveryTracker) OnBrokerWrite(meta kgo.BrokerMetadata, _ int16, _ int, _, _ time.Duration, err error) {
	d.noteBroker(meta.NodeID, err)
}

// OnBrokerRead implements kgo.HookBrokerRead: a broker that died with a
// request in flight shows here (EOF, connection reset).
func (d *deliveryTracker) OnBrokerRead(meta kgo.BrokerMetadata, _ int16, _ int, _, _ time.Duration, err error) {
	d.noteBroker(meta.NodeID, err)
}

// OnProduceRecordPartitioned implements kgo.HookProduceRecordPartitioned:
// from here on the record's partition is known (and safe to read).
func (d *deliveryTracker) OnProduceRecordPartitioned(r *kgo.Record, _ int32) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.seqOf[r]; ok {
		d.partition[r] = r.Partition
	}
}
