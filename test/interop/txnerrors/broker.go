package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// batchTxn is one transaction of the brokers' AddPartitionsToTxn (v4+).
type batchTxn struct {
	p          *producer
	verifyOnly bool
	parts      []tp
}

// addBatch sends the brokers' AddPartitionsToTxn (v4+, as a leader verifying a
// transactional produce) to the coordinator of the first transaction and prints the
// top-level code, then one line per transaction and partition, sorted.
func (r *runner) addBatch(v int16, txns ...batchTxn) {
	if r.err != nil {
		return
	}
	node, err := r.coordinator(txns[0].p.id, 1)
	if r.fail(err) {
		return
	}
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	var what []string
	for _, t := range txns {
		rt := kmsg.NewAddPartitionsToTxnRequestTransaction()
		rt.TransactionalID, rt.ProducerID, rt.ProducerEpoch = t.p.id, t.p.pid, t.p.epoch
		rt.VerifyOnly = t.verifyOnly
		for _, part := range t.parts {
			tt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
			tt.Topic, tt.Partitions = part.topic, []int32{part.partition}
			rt.Topics = append(rt.Topics, tt)
		}
		req.Transactions = append(req.Transactions, rt)
		mode := "add"
		if t.verifyOnly {
			mode = "verify"
		}
		what = append(what, fmt.Sprintf("%s %s epoch %d", t.p.id, mode, t.p.epoch))
	}
	kresp, err := r.request(node, v, req)
	if r.fail(err) {
		return
	}
	resp := kresp.(*kmsg.AddPartitionsToTxnResponse)
	r.line(req.Key(), v, "["+strings.Join(what, ", ")+"]", resp.ErrorCode)
	var lines []string
	for _, t := range resp.Transactions {
		for _, tt := range t.Topics {
			for _, pa := range tt.Partitions {
				lines = append(lines, fmt.Sprintf("%s %s-%d %s", t.TransactionalID, tt.Topic, pa.Partition, codeName(pa.ErrorCode)))
			}
		}
	}
	sort.Strings(lines)
	for _, l := range lines {
		r.note("  %s", l)
	}
}

// marker is one marker of WriteTxnMarkers.
type marker struct {
	pid              int64
	epoch            int16
	commit           bool
	coordinatorEpoch int32
	part             tp
}

// writeMarkers sends WriteTxnMarkers with one marker to the leader of the topic's
// partition 0 (as a coordinator does) and prints the partition's code.
func (r *runner) writeMarkers(v int16, m marker) {
	if r.err != nil {
		return
	}
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	rm := kmsg.NewWriteTxnMarkersRequestMarker()
	rm.ProducerID, rm.ProducerEpoch, rm.Committed = m.pid, m.epoch, m.commit
	rm.CoordinatorEpoch = m.coordinatorEpoch
	if v >= 2 {
		rm.TransactionVersion = 2
	}
	rt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
	rt.Topic, rt.Partitions = m.part.topic, []int32{m.part.partition}
	rm.Topics = append(rm.Topics, rt)
	req.Markers = append(req.Markers, rm)
	kresp, err := r.request(r.leaders[0], v, req)
	if r.fail(err) {
		return
	}
	resp := kresp.(*kmsg.WriteTxnMarkersResponse)
	code := int16(-1)
	if len(resp.Markers) == 1 && len(resp.Markers[0].Topics) == 1 && len(resp.Markers[0].Topics[0].Partitions) == 1 {
		code = resp.Markers[0].Topics[0].Partitions[0].ErrorCode
	} else {
		r.fail(fmt.Errorf("write txn markers v%d: %d markers answered", v, len(resp.Markers)))
		return
	}
	result := "abort"
	if m.commit {
		result = "commit"
	}
	r.line(req.Key(), v, fmt.Sprintf("%s %s epoch %d coordinator epoch %d", m.part, result, m.epoch, m.coordinatorEpoch), code)
}
