//go:build sluicebug

package replication

import (
	"encoding/binary"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sluice-io/sluice/internal/commitlog"
	"github.com/sluice-io/sluice/internal/records"
)

// Planted bugs, for proving that `sluice verify` finds what it claims to
// (a binary built with -tags sluicebug only; release builds have none of
// this, bug_nobug.go). SLUICE_BUG, read once at start-up, picks one:
//
//   - drop-acked: every bugEvery-th client batch of a topic not named
//     "__..." is acknowledged at the log end offset but never appended (a
//     lost write);
//   - duplicate: every bugEvery-th such batch is appended a second time,
//     as a non-idempotent copy (the producer state would drop a repeat),
//     so its values sit at two offsets (a duplicate);
//   - hw-ahead: the high watermark follows the leader's log end offset
//     without waiting for the ISR, so acks=all answers before followers
//     have the records and a leader's crash loses them (lost writes).
var plantedBug = os.Getenv("SLUICE_BUG")

// bugEvery spaces the batches the drop and duplicate bugs touch, so a run
// sees both healthy and broken batches.
const bugEvery = 50

// bugBatches counts the client batches the bugs have looked at.
var bugBatches atomic.Int64

// bugTargets reports whether this append is one a bug touches: a client
// batch of a user topic, every bugEvery-th.
func bugTargets(p *Partition, bug string) bool {
	if plantedBug != bug || strings.HasPrefix(p.tp.Topic, "__") {
		return false
	}
	return bugBatches.Add(1)%bugEvery == 0
}

// bugDropAcked fills info as if batches had been appended at the log end
// offset, without appending them, and reports whether it did. Called with
// p.mu held, after the append checks passed.
func bugDropAcked(p *Partition, batches []byte, info *commitlog.AppendInfo) bool {
	if !bugTargets(p, "drop-acked") {
		return false
	}
	n := int64(0)
	_, _ = records.Batches(batches, func(h records.Header, _ []byte) error {
		n += int64(h.LastOffsetDelta) + 1
		return nil
	})
	leo := p.log.LogEndOffset()
	*info = commitlog.AppendInfo{FirstOffset: leo, LastOffset: leo + n - 1, LogStartOffset: p.log.LogStartOffset()}
	p.logger.Warn("planted bug drop-acked: acknowledging a batch without appending it", "first_offset", leo, "records", n)
	return true
}

// bugDuplicate appends batches (already appended once) again, stripped of
// their producer id so the producer state does not recognise the repeat.
// Called with p.mu held.
func bugDuplicate(p *Partition, batches []byte) {
	if !bugTargets(p, "duplicate") {
		return
	}
	again := append([]byte(nil), batches...)
	_, _ = records.Batches(again, func(h records.Header, b []byte) error {
		if h.IsTransactional() || h.IsControl() {
			return nil
		}
		binary.BigEndian.PutUint64(b[records.OffsetProducerID:], ^uint64(0))
		binary.BigEndian.PutUint16(b[records.OffsetProducerEpoch:], ^uint16(0))
		binary.BigEndian.PutUint32(b[records.OffsetBaseSequence:], ^uint32(0))
		records.UpdateCRC(b)
		return nil
	})
	info, err := p.log.Append(again, p.mu.leaderEpoch)
	p.logger.Warn("planted bug duplicate: appended a batch twice", "first_offset", info.FirstOffset, "err", err)
}

var bugHWOnce sync.Once

// bugISR is nobody under hw-ahead: the high watermark then waits for no
// follower.
func bugISR(isr []int32) []int32 {
	if plantedBug == "hw-ahead" {
		bugHWOnce.Do(func() { slog.Warn("planted bug hw-ahead: the high watermark waits for no follower") })
		return nil
	}
	return isr
}
