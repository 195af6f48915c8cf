// Package recordstest builds record batches (v2) for tests through
// records.Builder, so a test states the records and header fields it
// needs instead of encoding a batch by hand. Tests that need broken or
// unusual bytes still write them themselves.
package recordstest

import (
	"testing"

	"github.com/sluice-io/sluice/internal/records"
)

// Record is one record of a test batch; a nil Key or Value is null.
type Record struct {
	// Timestamp is the record's CreateTime in Unix milliseconds.
	Timestamp  int64
	Key, Value []byte
	Headers    []records.RecordHeader
}

// Option changes the batch header from a plain batch's: no producer id,
// uncompressed, CreateTime, base offset 0, partition leader epoch 0.
type Option func(*records.BuilderOptions)

// Compression compresses the records with codec (records.GzipCompression...).
func Compression(codec int) Option {
	return func(o *records.BuilderOptions) { o.Compression = codec }
}

// Producer makes an idempotent batch of producer id and epoch whose first
// record has sequence baseSequence.
func Producer(id int64, epoch int16, baseSequence int32) Option {
	return func(o *records.BuilderOptions) {
		o.ProducerID, o.ProducerEpoch, o.BaseSequence = id, epoch, baseSequence
	}
}

// Transactional sets the transactional bit (with Producer).
func Transactional() Option {
	return func(o *records.BuilderOptions) { o.Transactional = true }
}

// LeaderEpoch sets the partition leader epoch.
func LeaderEpoch(epoch int32) Option {
	return func(o *records.BuilderOptions) { o.PartitionLeaderEpoch = epoch }
}

// BaseOffset sets the base offset.
func BaseOffset(offset int64) Option {
	return func(o *records.BuilderOptions) { o.BaseOffset = offset }
}

// LogAppendTime makes a LogAppendTime batch whose max timestamp is ms.
func LogAppendTime(ms int64) Option {
	return func(o *records.BuilderOptions) { o.LogAppendTimeMs = ms }
}

// Options returns the builder options opts make.
func Options(opts ...Option) records.BuilderOptions {
	o := records.NonIdempotent(records.NoCompression)
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// Build encodes recs as one batch.
func Build(recs []Record, opts ...Option) ([]byte, error) {
	b := records.NewBuilder(Options(opts...))
	for _, r := range recs {
		b.Add(r.Timestamp, r.Key, r.Value, r.Headers)
	}
	return b.Build()
}

// Batch is Build that fails tb on error.
func Batch(tb testing.TB, recs []Record, opts ...Option) []byte {
	tb.Helper()
	out, err := Build(recs, opts...)
	if err != nil {
		tb.Fatalf("build test batch: %v", err)
	}
	return out
}

// Marker builds the control batch that commits (or aborts) a transaction
// of the producer opts name, as records.BuildEndTxnMarker.
func Marker(tb testing.TB, commit bool, coordinatorEpoch int32, timestamp int64, opts ...Option) []byte {
	tb.Helper()
	out, err := records.BuildEndTxnMarker(Options(opts...), commit, coordinatorEpoch, timestamp)
	if err != nil {
		tb.Fatalf("build test marker: %v", err)
	}
	return out
}

// N returns n records made by f.
func N(n int, f func(i int) Record) []Record {
	recs := make([]Record, n)
	for i := range recs {
		recs[i] = f(i)
	}
	return recs
}

// Values returns one keyless record per value, all at timestamp ts.
func Values(ts int64, values ...string) []Record {
	return N(len(values), func(i int) Record { return Record{Timestamp: ts, Value: []byte(values[i])} })
}
