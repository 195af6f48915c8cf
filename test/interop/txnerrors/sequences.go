package main

import "fmt"

// sequence is one scenario; its steps print their lines and record the first failure
// in the runner (after which they do nothing).
type sequence struct {
	name string
	run  func(r *runner)
}

func sequences() []sequence {
	return []sequence{
		{"stale-epoch-tv1", staleEpochTV1},
		{"stale-epoch-tv2", staleEpochTV2},
		{"unknown-id", unknownID},
		{"no-txn-tv1", noTxnTV1},
		{"no-txn-tv2", noTxnTV2},
		{"end-twice-tv1", endTwiceTV1},
		{"end-twice-tv2", endTwiceTV2},
		{"missing-topic", missingTopicSeq},
		{"race-tv1", raceTV1},
		{"race-tv2", raceTV2},
		{"timeout", timeoutSeq},
		{"timeout-abort-tv1", timeoutAbortTV1},
		{"timeout-abort-tv2", timeoutAbortTV2},
		{"offsets-member", offsetsMember},
		{"offsets-unadded", offsetsUnadded},
		{"offsets-nogroup", offsetsNoGroup},
		{"kip360", kip360},
		{"kip360-ongoing", kip360Ongoing},
		{"unadded-produce-tv1", unaddedTV1},
		{"unadded-produce-tv2", unaddedTV2},
		{"verify-tv1", verifyTV1},
		{"verify-tv2", verifyTV2},
		{"markers", markersSeq},
	}
}

var (
	tv1Produce = []int16{9, 10, 11}
	tv2Produce = []int16{12, 13}
)

// staleEpochTV1: a newer InitProducerId bumps the epoch; every request of the old epoch
// is refused, PRODUCER_FENCED turned INVALID_PRODUCER_EPOCH at the versions before it.
func staleEpochTV1(r *runner) {
	p := r.newProducer("stale-tv1", 4)
	old := *p
	r.initPID(p, 4, 60000, -1, -1, "again")
	for _, v := range []int16{1, 2, 3} {
		r.addPartitions(&old, v, tp{topic, 0})
	}
	for _, v := range []int16{1, 2, 4} {
		r.addOffsets(&old, v, "txnerr-stale-group")
	}
	for _, v := range []int16{1, 2, 4, 5} {
		r.endTxn(&old, v, true)
	}
	for _, v := range tv1Produce {
		r.produce(&old, v, 0, 0)
	}
	for _, v := range []int16{2, 3, 4} {
		r.txnOffsetCommit(&old, v, "txnerr-stale-group", "", -1, "simple group")
	}
	r.describe(p.id)
}

// staleEpochTV2: the same under Transactions V2, then the epoch an EndTxn v5 left behind.
func staleEpochTV2(r *runner) {
	p := r.newProducer("stale-tv2", 5)
	old := *p
	r.initPID(p, 5, 60000, -1, -1, "again")
	for _, v := range tv2Produce {
		r.produce(&old, v, 0, 0)
	}
	r.txnOffsetCommit(&old, 5, "txnerr-stale-group", "", -1, "simple group")
	r.endTxn(&old, 5, true)
	r.endTxn(&old, 5, false)
	r.produce(p, 12, 1, 0)
	beforeEnd := *p
	r.endTxn(p, 5, true)
	r.settle(p.id)
	r.produce(&beforeEnd, 12, 1, 1)
	r.produce(&beforeEnd, 12, 0, 0)
	r.describe(p.id)
}

// unknownID: a transactional id the coordinator has never seen.
func unknownID(r *runner) {
	p := &producer{id: "unknown-id", pid: 4242, epoch: 0}
	for _, v := range []int16{1, 2, 4, 5} {
		r.endTxn(p, v, true)
	}
	for _, v := range []int16{1, 3} {
		r.addPartitions(p, v, tp{topic, 0})
	}
	for _, v := range []int16{1, 4} {
		r.addOffsets(p, v, "txnerr-unknown-group")
	}
	r.produce(p, 11, 0, 0)
	r.produce(p, 12, 0, 0)
	r.txnOffsetCommit(p, 3, "txnerr-unknown-group", "", -1, "simple group")
	r.txnOffsetCommit(p, 5, "txnerr-unknown-group", "", -1, "simple group")
	r.describe(p.id)
}

// noTxnTV1: EndTxn (commit, abort) with no transaction open.
func noTxnTV1(r *runner) {
	p := r.newProducer("no-txn-tv1", 4)
	for _, v := range []int16{1, 4} {
		r.endTxn(p, v, true)
		r.endTxn(p, v, false)
	}
	r.describe(p.id)
}

// noTxnTV2: under Transactions V2 (EndTxn v5).
func noTxnTV2(r *runner) {
	p := r.newProducer("no-txn-tv2", 5)
	r.endTxn(p, 5, true)
	r.endTxn(p, 5, false)
	r.settle(p.id)
	r.endTxn(p, 5, false)
	r.settle(p.id)
	r.endTxn(p, 5, true)
	r.describe(p.id)
}

// endTwiceTV1: an EndTxn after the transaction completed (a retry, or the other end).
func endTwiceTV1(r *runner) {
	p := r.newProducer("end-twice-tv1", 4)
	r.addPartitions(p, 3, tp{topic, 0})
	r.produce(p, 11, 0, 0)
	r.endTxn(p, 4, true)
	r.settle(p.id)
	r.endTxn(p, 4, true)
	r.endTxn(p, 1, true)
	r.endTxn(p, 4, false)
	r.describe(p.id)
}

// endTwiceTV2: the same with the epoch EndTxn v5 bumps, and the old epoch after it.
func endTwiceTV2(r *runner) {
	p := r.newProducer("end-twice-tv2", 5)
	r.produce(p, 12, 0, 0)
	old := *p
	r.endTxn(p, 5, true)
	r.settle(p.id)
	retry := old
	r.endTxn(&retry, 5, true)
	retry = old
	r.endTxn(&retry, 5, false)
	r.endTxn(p, 5, true)
	r.produce(&old, 12, 0, 1)
	r.endTxn(p, 5, false)
	r.settle(p.id)
}

// missingTopicSeq: AddPartitionsToTxn for a topic or partition that does not exist.
func missingTopicSeq(r *runner) {
	p := r.newProducer("missing-topic", 4)
	for _, v := range []int16{1, 2, 3} {
		r.addPartitions(p, v, tp{missingTopic, 0})
	}
	r.addPartitions(p, 3, tp{topic, 0}, tp{missingTopic, 0})
	r.addPartitions(p, 3, tp{topic, 7})
	r.describe(p.id)
}

// raceTV1: a second producer on the same id fences the first, whose open transaction is
// aborted (CONCURRENT_TRANSACTIONS until it is).
func raceTV1(r *runner) {
	a := r.newProducer("race-tv1", 4)
	r.addPartitions(a, 3, tp{topic, 0})
	r.produce(a, 11, 0, 0)
	b := &producer{id: a.id, pid: -1, epoch: -1}
	r.initPID(b, 4, 60000, -1, -1, "second producer")
	r.initSettled(b, 4, "second producer, retried")
	r.settle(a.id)
	r.produce(a, 11, 0, 1)
	r.addPartitions(a, 3, tp{topic, 1})
	r.addPartitions(a, 1, tp{topic, 1})
	r.endTxn(a, 4, true)
	r.endTxn(a, 1, true)
	r.initPID(a, 3, 60000, a.pid, a.epoch, "first producer recovers")
	r.initPID(a, 4, 60000, a.pid, a.epoch, "first producer recovers")
	r.addPartitions(b, 3, tp{topic, 0})
	r.produce(b, 11, 0, 0)
	r.endTxn(b, 4, true)
	r.settle(b.id)
}

// raceTV2: the same under Transactions V2.
func raceTV2(r *runner) {
	a := r.newProducer("race-tv2", 5)
	r.produce(a, 12, 0, 0)
	b := &producer{id: a.id, pid: -1, epoch: -1}
	r.initPID(b, 5, 60000, -1, -1, "second producer")
	r.initSettled(b, 5, "second producer, retried")
	r.settle(a.id)
	r.produce(a, 12, 0, 1)
	r.endTxn(a, 5, true)
	r.produce(b, 12, 0, 0)
	r.endTxn(b, 5, true)
	r.settle(b.id)
}

// timeoutSeq: transaction.timeout.ms above transaction.max.timeout.ms (900000), or not
// positive, for a new id and for one that exists.
func timeoutSeq(r *runner) {
	p := &producer{id: "timeout", pid: -1, epoch: -1}
	for _, v := range []int16{1, 3, 4, 5} {
		r.initPID(p, v, 900001, -1, -1, "timeout 900001")
	}
	r.initPID(p, 4, 0, -1, -1, "timeout 0")
	r.initPID(p, 4, -1, -1, -1, "timeout -1")
	r.describe(p.id)
	r.initPID(p, 4, 900000, -1, -1, "timeout 900000")
	r.initPID(p, 4, 900001, -1, -1, "timeout 900001")
	r.initPID(p, 5, 900001, p.pid, p.epoch, "timeout 900001 recovering")
	r.describe(p.id)
}

// timeoutAbortTV1: the coordinator aborts a transaction past its transaction.timeout.ms
// (1 s; the script sets transaction.abort.timed.out.transaction.cleanup.interval.ms to
// 200 ms), fencing its producer, which then recovers with its producer id and epoch.
func timeoutAbortTV1(r *runner) {
	p := r.newProducerTimeout("timeout-abort-tv1", 4, 1000)
	r.addPartitions(p, 3, tp{topic, 1})
	r.produce(p, 11, 1, 0)
	old := *p
	r.waitState(p.id, "CompleteAbort")
	c := old
	r.endTxn(&c, 4, true)
	r.endTxn(&c, 4, false)
	r.addPartitions(&c, 3, tp{topic, 1})
	r.produce(&c, 11, 1, 1)
	r.initPID(&c, 4, 60000, old.pid, old.epoch, "timed-out producer recovers")
	r.describe(p.id)
}

// timeoutAbortTV2: the same under Transactions V2, where the late commit carries the
// epoch just before the abort's.
func timeoutAbortTV2(r *runner) {
	p := r.newProducerTimeout("timeout-abort-tv2", 5, 1000)
	r.produce(p, 12, 1, 0)
	old := *p
	r.waitState(p.id, "CompleteAbort")
	c := old
	r.endTxn(&c, 5, true)
	c = old
	r.endTxn(&c, 5, false)
	r.produce(&old, 12, 1, 1)
	c = old
	r.initPID(&c, 5, 60000, old.pid, old.epoch, "timed-out producer recovers")
	r.describe(p.id)
}

// offsetsMember: TxnOffsetCommit for a Stable classic group with one member, as an
// unknown member, at a wrong generation, as the member, and with no member.
func offsetsMember(r *runner) {
	const group = "txnerr-group"
	m := r.joinGroup(group)
	for _, v := range []int16{2, 3, 4, 5, 6} {
		p := r.newProducer(fmt.Sprintf("offsets-member-v%d", v), clientVersion(v))
		if v < 5 {
			r.addOffsets(p, 3, group)
		}
		r.txnOffsetCommit(p, v, group, "unknown-member", m.generation, "unknown member")
		r.txnOffsetCommit(p, v, group, m.id, m.generation+5, "member, generation+5")
		r.describe(p.id)
		r.txnOffsetCommit(p, v, group, m.id, m.generation, "member")
		r.txnOffsetCommit(p, v, group, "", -1, "no member, generation -1")
		r.describe(p.id)
		r.endTxn(p, clientVersion(v), false)
		r.settle(p.id)
	}
}

// offsetsUnadded: TxnOffsetCommit before AddOffsetsToTxn (TV1), with and without an
// open transaction.
func offsetsUnadded(r *runner) {
	const group = "txnerr-unadded-group"
	for _, v := range []int16{0, 2, 3, 4} {
		p := r.newProducer(fmt.Sprintf("offsets-unadded-v%d", v), 4)
		r.txnOffsetCommit(p, v, group, "", -1, "simple group, empty transaction")
		r.addPartitions(p, 3, tp{topic, 0})
		r.txnOffsetCommit(p, v, group, "", -1, "simple group, partition added")
		r.describe(p.id)
		r.endTxn(p, 4, false)
		r.settle(p.id)
	}
}

// offsetsNoGroup: TxnOffsetCommit for a group that does not exist.
func offsetsNoGroup(r *runner) {
	for _, v := range []int16{3, 5} {
		group := fmt.Sprintf("txnerr-nogroup-v%d", v)
		p := r.newProducer(fmt.Sprintf("offsets-nogroup-v%d", v), clientVersion(v))
		if v < 5 {
			r.addOffsets(p, 3, group)
		}
		r.txnOffsetCommit(p, v, group, "some-member", 1, "member, generation 1")
		r.txnOffsetCommit(p, v, group, "", 1, "no member, generation 1")
		r.txnOffsetCommit(p, v, group, "", -1, "no member, generation -1")
		r.describe(p.id)
		r.endTxn(p, clientVersion(v), true)
		r.settle(p.id)
	}
}

// kip360: InitProducerId with a producer id and epoch to recover that do not match.
func kip360(r *runner) {
	p := r.newProducer("kip360", 4)
	q := &producer{id: p.id}
	for _, v := range []int16{3, 4, 5} {
		r.initPID(q, v, 60000, p.pid+1, p.epoch, "other producer id")
	}
	r.initPID(q, 4, 60000, p.pid, p.epoch+5, "epoch+5")
	r.initPID(q, 4, 60000, p.pid, -1, "no epoch")
	first := p.epoch
	r.initPID(p, 4, 60000, p.pid, p.epoch, "current epoch")
	r.initPID(q, 4, 60000, p.pid, first, "previous epoch again")
	r.initPID(p, 4, 60000, p.pid, p.epoch, "current epoch")
	for _, v := range []int16{3, 4, 5} {
		r.initPID(q, v, 60000, p.pid, first, "two epochs back")
	}
	fresh := &producer{id: "kip360-new"}
	r.initPID(fresh, 4, 60000, 4242, 3, "unknown id, a producer id")
	r.describe(p.id)
}

// kip360Ongoing: recovery with the current epoch while a transaction is open aborts it.
func kip360Ongoing(r *runner) {
	p := r.newProducer("kip360-ongoing", 4)
	r.addPartitions(p, 3, tp{topic, 1})
	r.produce(p, 11, 1, 0)
	r.initPID(p, 4, 60000, p.pid, p.epoch, "current epoch, transaction open")
	r.settle(p.id)
	q := *p
	r.initPID(&q, 4, 60000, p.pid, p.epoch, "current epoch again")
	r.describe(p.id)
}

// unaddedTV1: a transactional Produce (v9-v11) for a partition not in the transaction.
func unaddedTV1(r *runner) {
	p := r.newProducer("unadded-tv1", 4)
	for _, v := range tv1Produce {
		r.produce(p, v, 0, 0)
	}
	r.addPartitions(p, 3, tp{topic, 0})
	for _, v := range tv1Produce {
		r.produce(p, v, 1, 0)
	}
	r.produce(p, 11, 0, 0)
	r.describe(p.id)
	r.endTxn(p, 4, false)
	r.settle(p.id)
}

// unaddedTV2: Produce v12+ adds the partition itself.
func unaddedTV2(r *runner) {
	p := r.newProducer("unadded-tv2", 5)
	r.produce(p, 12, 0, 0)
	r.produce(p, 13, 1, 0)
	r.describe(p.id)
	r.endTxn(p, 5, true)
	r.settle(p.id)
}

// verifyTV1: the brokers' AddPartitionsToTxn (v4+) that a leader sends to verify a
// transactional produce: partitions in and not in the transaction, a wrong epoch, an
// unknown id, two transactions in one request, a missing topic.
func verifyTV1(r *runner) {
	p := r.newProducer("verify-tv1", 4)
	r.addPartitions(p, 3, tp{topic, 0})
	for _, v := range []int16{4, 5} {
		r.addBatch(v, batchTxn{p, true, []tp{{topic, 0}, {topic, 1}}})
	}
	future := &producer{id: p.id, pid: p.pid, epoch: p.epoch + 1}
	r.addBatch(4, batchTxn{future, true, []tp{{topic, 0}}})
	unknown := &producer{id: "verify-unknown", pid: 4242, epoch: 0}
	r.addBatch(4, batchTxn{unknown, true, []tp{{topic, 0}}})
	r.addBatch(4, batchTxn{p, true, []tp{{topic, 0}}}, batchTxn{unknown, true, []tp{{topic, 0}}})
	r.addBatch(4, batchTxn{p, true, []tp{{missingTopic, 0}}})
	r.describe(p.id)
	r.endTxn(p, 4, false)
	r.settle(p.id)
	r.addBatch(4, batchTxn{p, true, []tp{{topic, 0}}})
}

// verifyTV2: the brokers' adding form (VerifyOnly false), v5 as a TV2 produce adds its
// partition, and v4.
func verifyTV2(r *runner) {
	p := r.newProducer("verify-tv2", 5)
	r.addBatch(5, batchTxn{p, false, []tp{{topic, 0}}})
	r.addBatch(4, batchTxn{p, false, []tp{{topic, 1}}})
	r.describe(p.id)
	stale := &producer{id: p.id, pid: p.pid, epoch: p.epoch - 1}
	r.addBatch(5, batchTxn{stale, false, []tp{{topic, 1}}})
	r.endTxn(p, 5, false)
	r.settle(p.id)
}

// markersSeq: WriteTxnMarkers as a coordinator sends them, to the partition leader, for
// producers of no transaction here (ids the brokers never hand out): a missing
// partition, a stale coordinator epoch, a stale producer epoch.
func markersSeq(r *runner) {
	const pid = 8_000_000_000
	for _, v := range []int16{1, 2} {
		base := int64(pid) + int64(v)*10
		r.writeMarkers(v, marker{base, 2, true, 5, tp{topic, 0}})
		r.writeMarkers(v, marker{base, 2, false, 5, tp{topic, 0}})
		r.writeMarkers(v, marker{base, 2, true, 3, tp{topic, 0}})
		r.writeMarkers(v, marker{base, 1, true, 5, tp{topic, 0}})
		r.writeMarkers(v, marker{base, 3, false, 6, tp{topic, 0}})
		r.writeMarkers(v, marker{base + 1, 0, true, 0, tp{missingTopic, 0}})
		r.writeMarkers(v, marker{base + 1, 0, true, 0, tp{topic, 7}})
	}
}

// clientVersion is the InitProducerId and EndTxn version of the client generation a
// TxnOffsetCommit version belongs to (v5+: Transactions V2).
func clientVersion(txnOffsetCommit int16) int16 {
	if txnOffsetCommit >= 5 {
		return 5
	}
	return 4
}
