package commitlog

import (
	"fmt"

	"github.com/sluice-io/sluice/internal/commitlog/producerstate"
	"github.com/sluice-io/sluice/internal/records"
)

// LeaderAppend picks the producer-state checks of AppendValidated: a
// client's append (Append), a coordinator's (AppendAsCoordinator), or a
// client's with KIP-890 verification (AppendVerified with Guard).
type LeaderAppend struct {
	Coordinator bool
	Verify      bool
	Guard       VerificationGuard
}

// AppendValidated is the leader's append of records that records.Validate
// accepted: the same as Append, AppendAsCoordinator or AppendVerified (by
// la), except that the batches are not parsed and CRC-checked a second
// time: Validate did it, and only Validate makes a records.Validated. The
// header checks the log applies to every append (whole batches, offset
// range, record count, max.message.bytes) still run; they cost nothing
// next to a CRC pass.
func (l *Log) AppendValidated(v *records.Validated, leaderEpoch int32, la LeaderAppend) (AppendInfo, error) {
	checks := appendChecks{origin: producerstate.OriginClient, verify: la.Verify, guard: la.Guard}
	if la.Coordinator {
		checks = appendChecks{origin: producerstate.OriginCoordinator}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkUsableLocked(); err != nil {
		return AppendInfo{}, err
	}
	batches := v.Bytes()
	// A local copy: the append rewrites base offsets and epochs in the
	// headers, and the Validated stays as Validate left it.
	var one [1]records.Header
	headers := append(one[:0], v.Headers()...)
	if err := checkValidatedHeaders(batches, headers, l.mu.opts.MaxMessageBytes); err != nil {
		return AppendInfo{}, err
	}
	return l.appendAsLeaderLocked(batches, headers, leaderEpoch, checks)
}

// checkValidatedHeaders is parseAppend's checks without the CRC pass.
func checkValidatedHeaders(batches []byte, headers []records.Header, maxMessageBytes int) error {
	if len(headers) == 0 {
		return fmt.Errorf("%w: no batches", ErrCorruptBatch)
	}
	var total int64
	for _, h := range headers {
		if h.LastOffsetDelta < 0 || h.RecordCount < 0 {
			return fmt.Errorf("%w: batch with last offset delta %d, %d records", ErrCorruptBatch, h.LastOffsetDelta, h.RecordCount)
		}
		if maxMessageBytes > 0 && h.Size() > int64(maxMessageBytes) {
			return fmt.Errorf("%w: %d bytes, max.message.bytes %d", ErrRecordBatchTooLarge, h.Size(), maxMessageBytes)
		}
		total += h.Size()
	}
	if total != int64(len(batches)) {
		return fmt.Errorf("%w: %d bytes hold batches of %d", ErrCorruptBatch, len(batches), total)
	}
	return nil
}
