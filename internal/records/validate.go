package records

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TimestampType is a topic's message.timestamp.type.
type TimestampType int8

const (
	CreateTime    TimestampType = 0
	LogAppendTime TimestampType = 1
)

// ValidateOptions are the topic's rules for one append.
type ValidateOptions struct {
	// NowMs is the broker's wall clock in milliseconds.
	NowMs         int64
	TimestampType TimestampType
	// TimestampBeforeMaxMs and TimestampAfterMaxMs bound CreateTime
	// timestamps around NowMs (KIP-937). Kafka's defaults are
	// math.MaxInt64 and 3600000.
	TimestampBeforeMaxMs int64
	TimestampAfterMaxMs  int64
	// Compacted makes keyless records invalid (cleanup.policy has compact).
	Compacted bool
	// MaxMessageBytes is max.message.bytes; 0 means no limit.
	MaxMessageBytes int32
	// SegmentBytes is segment.bytes; an append larger than a segment gets
	// RECORD_LIST_TOO_LARGE. 0 means no limit.
	SegmentBytes int64
	// ProduceVersion is the Produce request version, used for the rule that
	// zstd needs v7+. 0 skips that rule.
	ProduceVersion int16
	// Internal marks a broker-internal append (coordinators): the checks
	// Kafka applies only to clients (base offset 0, offset range, no control
	// batches, sequence) are skipped.
	Internal bool
	// Decoder decompresses the records: its per-batch cap and the broker's
	// decompression budget, the same as the read paths'. nil means the
	// default cap and no budget.
	Decoder *Decoder
}

// BatchInfo describes one validated batch so the log can assign offsets and
// index it without parsing again.
type BatchInfo struct {
	// Header is the batch header after Validate's rewrites.
	Header Header
	// Start and End are the batch's byte range in the validated buffer.
	Start, End int
	// RecordCount is the number of records, checked against the records.
	RecordCount int32
	// MaxTimestamp is the largest record timestamp (NowMs for
	// LogAppendTime; -1 if no record has one) and MaxTimestampDelta the
	// offset delta of the first record carrying it.
	MaxTimestamp      int64
	MaxTimestampDelta int32
}

// ValidateResult is the outcome of a successful Validate.
type ValidateResult struct {
	Batches []BatchInfo
	// LogAppendTimeMs is NowMs when the topic uses LogAppendTime, else -1;
	// the produce response reports it.
	LogAppendTimeMs int64
	// MaxTimestamp is the largest timestamp over all batches.
	MaxTimestamp int64
	// Validated carries the batches and their headers to the log, so the
	// leader's append neither parses nor checks the CRC again.
	Validated Validated
}

// RecordError is one rejected record (KIP-467): its index in the batch
// and why.
type RecordError struct {
	BatchIndex int32
	Message    string
}

// ValidationError is a refused append, with the Kafka error code to return.
type ValidationError struct {
	Err          *kerr.Error
	RecordErrors []RecordError
	Message      string
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("%s: %s", e.Err.Message, e.Message)
}

func (e *ValidationError) Unwrap() error { return e.Err }

func refuse(code *kerr.Error, format string, args ...any) *ValidationError {
	return &ValidationError{Err: code, Message: fmt.Sprintf(format, args...)}
}

// refuseParse maps a framing or decompression error onto Kafka's code:
// record framing is INVALID_RECORD, anything that looks like damage
// (records beyond the per-batch cap included) is CORRUPT_MESSAGE, and a
// request that ended while waiting for decompression budget
// REQUEST_TIMED_OUT.
func refuseParse(err error) *ValidationError {
	switch {
	case errors.Is(err, ErrInvalidRecord):
		return refuse(kerr.InvalidRecord, "%v", err)
	case errors.Is(err, ErrUnknownCompression):
		return refuse(kerr.UnsupportedCompressionType, "%v", err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return refuse(kerr.RequestTimedOut, "%v", err)
	}
	return refuse(kerr.CorruptMessage, "%v", err)
}

// Validate checks the records of one partition in a produce request the way
// Kafka's broker does, rewriting in place only what Kafka rewrites:
// maxTimestamp (and, for LogAppendTime, the timestamp-type bit) and then
// the CRC. Base offset and partition leader epoch are left to the log
// (SetBaseOffset, SetPartitionLeaderEpoch, both outside the CRC).
// Compressed records are decompressed to check them but never re-encoded,
// within opts.Decoder's limits (waiting for its budget until ctx ends).
// A refusal is a *ValidationError.
func Validate(ctx context.Context, batches []byte, opts ValidateOptions) (ValidateResult, error) {
	res := ValidateResult{LogAppendTimeMs: -1, MaxTimestamp: -1}
	if opts.TimestampType == LogAppendTime {
		res.LogAppendTimeMs = opts.NowMs
	}
	if len(batches) == 0 {
		return res, refuse(kerr.InvalidRecord, "no record batch")
	}
	if opts.SegmentBytes > 0 && int64(len(batches)) > opts.SegmentBytes {
		return res, refuse(kerr.RecordListTooLarge, "%d bytes of records exceed segment.bytes %d", len(batches), opts.SegmentBytes)
	}
	info, err := validateBatch(ctx, batches, &opts)
	if err != nil {
		return res, err
	}
	if rest := batches[info.End:]; len(rest) > 0 {
		// Kafka refuses a second v2 batch per partition in a produce request;
		// bytes that are not a whole batch are damage.
		if isWholeBatch(rest) {
			return res, refuse(kerr.InvalidRecord, "more than one record batch for the partition")
		}
		return res, refuse(kerr.CorruptMessage, "%d bytes after the record batch", len(rest))
	}
	res.MaxTimestamp = info.MaxTimestamp
	res.Batches = []BatchInfo{info}
	res.Validated = Validated{buf: batches, one: [1]Header{info.Header}, n: 1}
	return res, nil
}

// isWholeBatch reports whether b starts with a v2 batch header whose
// declared size fits in b.
func isWholeBatch(b []byte) bool {
	h, err := ParseHeader(b)
	return err == nil && h.Size() <= int64(len(b))
}

// validateBatch validates the batch at the start of b (which may hold more
// bytes after it).
func validateBatch(ctx context.Context, b []byte, opts *ValidateOptions) (BatchInfo, error) {
	if len(b) <= OffsetMagic {
		return BatchInfo{}, refuse(kerr.CorruptMessage, "%d bytes are too short for a record batch", len(b))
	}
	if magic := int8(b[OffsetMagic]); magic != CurrentMagic {
		return BatchInfo{}, refuse(kerr.InvalidRecord, "record batch has magic %d; produce requests must use magic 2", magic)
	}
	if len(b) < HeaderSize {
		return BatchInfo{}, refuse(kerr.CorruptMessage, "%d bytes are too short for a record batch header", len(b))
	}
	length := int32(binary.BigEndian.Uint32(b[OffsetBatchLength:]))
	if length < HeaderSize-LogOverhead {
		return BatchInfo{}, refuse(kerr.CorruptMessage, "record batch length %d is below the header size", length)
	}
	size := int64(length) + LogOverhead
	if opts.MaxMessageBytes > 0 && size > int64(opts.MaxMessageBytes) {
		return BatchInfo{}, refuse(kerr.MessageTooLarge, "record batch of %d bytes exceeds max.message.bytes %d", size, opts.MaxMessageBytes)
	}
	if size > int64(len(b)) {
		return BatchInfo{}, refuse(kerr.CorruptMessage, "record batch declares %d bytes but %d are present", size, len(b))
	}
	batch := b[:size]
	if err := CheckCRC(batch); err != nil {
		return BatchInfo{}, refuse(kerr.CorruptMessage, "%v", err)
	}
	h, err := ParseHeader(batch)
	if err != nil {
		return BatchInfo{}, refuse(kerr.CorruptMessage, "%v", err)
	}
	if err := checkHeader(h, opts); err != nil {
		return BatchInfo{}, err
	}
	set, held, err := opts.Decoder.open(ctx, batch, true, checkOffsetDelta)
	if err != nil {
		return BatchInfo{}, refuseParse(err)
	}
	defer held.release()
	info := BatchInfo{Header: h, End: int(size), RecordCount: h.RecordCount, MaxTimestamp: -1}
	lower, upper := satSub(opts.NowMs, opts.TimestampBeforeMaxMs), satAdd(opts.NowMs, opts.TimestampAfterMaxMs)
	var refused recordRefusals
	err = walkRecords(set.data, h.RecordCount, func(i int32, r *Record) error {
		if err := checkOffsetDelta(i, r); err != nil {
			return err
		}
		ts := r.Timestamp(h) // a client-set LogAppendTime bit reads as Kafka reads it
		if ts > info.MaxTimestamp {
			info.MaxTimestamp, info.MaxTimestampDelta = ts, i
		}
		if f := checkRecord(h, r, ts, lower, upper, opts); f != recordOK {
			refused.add(f.code(), i, func() string { return f.message(r, ts, lower, upper) })
		}
		return nil
	})
	if err != nil {
		return BatchInfo{}, refuseParse(err)
	}
	if refused.count > 0 {
		return BatchInfo{}, refused.err()
	}
	rewriteTimestamps(batch, &info, opts)
	return info, nil
}

// checkOffsetDelta refuses a record whose offset delta is not its index:
// Kafka would re-encode such a batch; we store bytes as received.
func checkOffsetDelta(i int32, r *Record) error {
	if r.OffsetDelta != i {
		return fmt.Errorf("%w: record %d has offset delta %d", ErrInvalidRecord, i, r.OffsetDelta)
	}
	return nil
}

// checkHeader applies Kafka's batch-level rules.
func checkHeader(h Header, opts *ValidateOptions) *ValidationError {
	codec := h.Compression()
	if codec > maxKnownCompression {
		return refuse(kerr.UnsupportedCompressionType, "unknown compression codec %d", codec)
	}
	if codec == ZstdCompression && opts.ProduceVersion > 0 && opts.ProduceVersion < 7 {
		return refuse(kerr.UnsupportedCompressionType, "zstd needs Produce v7 or later, got v%d", opts.ProduceVersion)
	}
	if h.RecordCount < 0 {
		return refuse(kerr.InvalidRecord, "invalid record count %d", h.RecordCount)
	}
	if h.IsTransactional() && !h.HasProducerID() {
		return refuse(kerr.InvalidRecord, "transactional record batch without a producer id")
	}
	if opts.Internal {
		return nil
	}
	if h.BaseOffset != 0 {
		return refuse(kerr.InvalidRecord, "the base offset of a produced record batch must be 0, not %d", h.BaseOffset)
	}
	countFromOffsets := int64(h.LastOffsetDelta) + 1
	if countFromOffsets <= 0 {
		return refuse(kerr.InvalidRecord, "record batch has an invalid offset range [0, %d]", h.LastOffsetDelta)
	}
	if h.RecordCount <= 0 {
		return refuse(kerr.InvalidRecord, "invalid record count %d", h.RecordCount)
	}
	if countFromOffsets != int64(h.RecordCount) {
		return refuse(kerr.InvalidRecord, "offset range [0, %d] does not match record count %d", h.LastOffsetDelta, h.RecordCount)
	}
	if h.IsControl() {
		return refuse(kerr.InvalidRecord, "clients may not write control records")
	}
	if h.HasProducerID() && h.BaseSequence < 0 {
		return refuse(kerr.InvalidRecord, "invalid sequence %d in a record batch with producer id %d", h.BaseSequence, h.ProducerID)
	}
	if h.HasProducerID() && h.ProducerEpoch < 0 {
		return refuse(kerr.InvalidRecord, "invalid producer epoch %d for producer id %d", h.ProducerEpoch, h.ProducerID)
	}
	return nil
}

// recordFault is why a record is refused.
type recordFault int8

const (
	recordOK recordFault = iota
	faultNoKey
	faultTimestampRange
	faultLogAppendTime
)

// checkRecord applies Kafka's per-record rules: key for compacted topics
// first, then the timestamp.
func checkRecord(h Header, r *Record, ts, lower, upper int64, opts *ValidateOptions) recordFault {
	if opts.Compacted && r.Key == nil {
		return faultNoKey
	}
	if opts.TimestampType == CreateTime && ts != -1 {
		if ts < lower || ts > upper {
			return faultTimestampRange
		}
		return recordOK
	}
	if h.IsLogAppendTime() && !opts.Internal {
		return faultLogAppendTime
	}
	return recordOK
}

func (f recordFault) code() *kerr.Error {
	if f == faultNoKey {
		return kerr.InvalidRecord
	}
	return kerr.InvalidTimestamp
}

func (f recordFault) message(r *Record, ts, lower, upper int64) string {
	switch f {
	case faultNoKey:
		return "compacted topic cannot accept a record without a key"
	case faultTimestampRange:
		return fmt.Sprintf("timestamp %d of record %d is out of range; it must be within [%d, %d]", ts, r.OffsetDelta, lower, upper)
	}
	return "producers must not set the timestamp type to LogAppendTime"
}

// maxRecordErrors bounds the record errors one refusal lists (KIP-467):
// a batch may hold millions of records, all refused. Kafka lists every one;
// a client fails the records listed with their error and the others with
// the batch's, so the cap changes no outcome.
const maxRecordErrors = 1000

// recordRefusals gathers the records a batch refuses: all are counted,
// the first maxRecordErrors listed.
type recordRefusals struct {
	count int
	code  *kerr.Error
	errs  []RecordError
}

func (f *recordRefusals) add(code *kerr.Error, i int32, msg func() string) {
	f.count++
	if f.code != kerr.InvalidTimestamp {
		f.code = code
	}
	if len(f.errs) < maxRecordErrors {
		f.errs = append(f.errs, RecordError{BatchIndex: i, Message: msg()})
	}
}

// err builds the KIP-467 error: INVALID_TIMESTAMP if any record failed on
// its timestamp, else INVALID_RECORD; the message names at most three
// record errors, as Kafka's does.
func (f *recordRefusals) err() *ValidationError {
	var sb strings.Builder
	for i, e := range f.errs[:min(3, len(f.errs))] {
		if i > 0 {
			sb.WriteString("; ")
		}
		fmt.Fprintf(&sb, "record %d: %s", e.BatchIndex, e.Message)
	}
	return &ValidationError{
		Err:          f.code,
		RecordErrors: f.errs,
		Message:      fmt.Sprintf("%d record(s) rejected: %s", f.count, sb.String()),
	}
}

// rewriteTimestamps stores the max timestamp Kafka stores: the broker's time
// for LogAppendTime (with the type bit), else the records' true maximum.
// baseTimestamp is left alone, as Kafka leaves it; readers of LogAppendTime
// batches use maxTimestamp for every record.
func rewriteTimestamps(batch []byte, info *BatchInfo, opts *ValidateOptions) {
	h := &info.Header
	attrs, maxTs := h.Attributes&^TimestampTypeBit, info.MaxTimestamp
	if opts.TimestampType == LogAppendTime {
		attrs |= TimestampTypeBit
		maxTs = opts.NowMs
		info.MaxTimestamp, info.MaxTimestampDelta = opts.NowMs, 0
	}
	if attrs == h.Attributes && maxTs == h.MaxTimestamp {
		return
	}
	binary.BigEndian.PutUint16(batch[OffsetAttributes:], uint16(attrs))
	binary.BigEndian.PutUint64(batch[OffsetMaxTimestamp:], uint64(maxTs))
	UpdateCRC(batch)
	h.Attributes, h.MaxTimestamp = attrs, maxTs
	h.CRC = binary.BigEndian.Uint32(batch[OffsetCRC:])
}

func satAdd(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	if b < 0 && a < math.MinInt64-b {
		return math.MinInt64
	}
	return a + b
}

func satSub(a, b int64) int64 {
	if b == math.MinInt64 {
		return satAdd(satAdd(a, math.MaxInt64), 1)
	}
	return satAdd(a, -b)
}
