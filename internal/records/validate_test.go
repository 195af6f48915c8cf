package records

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestValidateAcceptsKgoBatchesForEveryCodec(t *testing.T) {
	for _, c := range codecs {
		t.Run(c.name, func(t *testing.T) {
			recs := testRecords(20, 100)
			b := kmsgBatch(t, c.id, recs, nil)
			orig := append([]byte(nil), b...)
			res, err := Validate(context.Background(), b, defaultOpts())
			if err != nil {
				t.Fatal(err)
			}
			if string(orig) != string(b) {
				t.Fatal("Validate changed a batch that needed no rewrite")
			}
			if len(res.Batches) != 1 {
				t.Fatalf("got %d batches", len(res.Batches))
			}
			info := res.Batches[0]
			if info.Start != 0 || info.End != len(b) || info.RecordCount != 20 {
				t.Fatalf("info %+v", info)
			}
			if info.MaxTimestamp != testNow+19 || info.MaxTimestampDelta != 19 || res.MaxTimestamp != testNow+19 {
				t.Fatalf("max timestamp %d at %d", info.MaxTimestamp, info.MaxTimestampDelta)
			}
			if res.LogAppendTimeMs != -1 {
				t.Fatalf("LogAppendTimeMs %d for CreateTime", res.LogAppendTimeMs)
			}
		})
	}
}

func TestValidateAcceptsXerialSnappy(t *testing.T) {
	recs := testRecords(50, 300)
	raw := encodeKmsgRecords(recs)
	b := kmsgBatch(t, NoCompression, recs, func(rb *kmsg.RecordBatch) {
		rb.Attributes = SnappyCompression
		rb.Records = xerialSnappy(raw, 1000)
	})
	if _, err := Validate(context.Background(), b, defaultOpts()); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := ForEachRecord(b, func(r Record) error {
		if string(r.Value) != string(recs[n].Value) {
			t.Fatalf("record %d value differs", n)
		}
		n++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n != 50 {
		t.Fatalf("read %d records", n)
	}
}

func wantCode(t *testing.T, err error, code *kerr.Error) *ValidationError {
	t.Helper()
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error %v is not a ValidationError", err)
	}
	if ve.Err != code {
		t.Fatalf("got %s (%v), want %s", ve.Err.Message, ve, code.Message)
	}
	if !errors.Is(err, code) {
		t.Fatal("errors.Is does not reach the kerr code")
	}
	return ve
}

func TestValidateRefusals(t *testing.T) {
	good := func(t *testing.T) []byte { return kmsgBatch(t, NoCompression, testRecords(3, 10), nil) }
	setCount := func(n int32) func([]byte) {
		return func(b []byte) { binary.BigEndian.PutUint32(b[OffsetRecordCount:], uint32(n)) }
	}
	cases := []struct {
		name  string
		batch func(t *testing.T) []byte
		opts  func(*ValidateOptions)
		code  *kerr.Error
	}{
		{"empty", func(t *testing.T) []byte { return nil }, nil, kerr.InvalidRecord},
		{"magic 1", func(t *testing.T) []byte { b := good(t); b[OffsetMagic] = 1; return b }, nil, kerr.InvalidRecord},
		{"magic 0 short", func(t *testing.T) []byte { b := good(t)[:30]; b[OffsetMagic] = 0; return b }, nil, kerr.InvalidRecord},
		{"bad crc", func(t *testing.T) []byte { b := good(t); b[len(b)-1] ^= 1; return b }, nil, kerr.CorruptMessage},
		{"partial batch", func(t *testing.T) []byte { b := good(t); return b[:len(b)-3] }, nil, kerr.CorruptMessage},
		{"short header", func(t *testing.T) []byte { return good(t)[:40] }, nil, kerr.CorruptMessage},
		{"trailing garbage", func(t *testing.T) []byte { return append(good(t), 1, 2, 3) }, nil, kerr.CorruptMessage},
		{"partial second batch", func(t *testing.T) []byte { return append(good(t), good(t)[:70]...) }, nil, kerr.CorruptMessage},
		{"two batches", func(t *testing.T) []byte { return append(good(t), good(t)...) }, nil, kerr.InvalidRecord},
		{"length below header", func(t *testing.T) []byte {
			return rewrite(good(t), func(b []byte) { binary.BigEndian.PutUint32(b[OffsetBatchLength:], 10) })
		}, nil, kerr.CorruptMessage},
		{"count above records", func(t *testing.T) []byte {
			return rewrite(good(t), func(b []byte) {
				setCount(4)(b)
				binary.BigEndian.PutUint32(b[OffsetLastOffsetDelta:], 3)
			})
		}, nil, kerr.InvalidRecord},
		{"count below records", func(t *testing.T) []byte {
			return rewrite(good(t), func(b []byte) {
				setCount(2)(b)
				binary.BigEndian.PutUint32(b[OffsetLastOffsetDelta:], 1)
			})
		}, nil, kerr.InvalidRecord},
		{"last offset delta mismatch", func(t *testing.T) []byte {
			return rewrite(good(t), func(b []byte) { binary.BigEndian.PutUint32(b[OffsetLastOffsetDelta:], 5) })
		}, nil, kerr.InvalidRecord},
		{"zero count", func(t *testing.T) []byte {
			return rewrite(good(t), func(b []byte) { setCount(0)(b) })
		}, nil, kerr.InvalidRecord},
		{"base offset not zero", func(t *testing.T) []byte {
			b := good(t)
			SetBaseOffset(b, 7) // outside the CRC
			return b
		}, nil, kerr.InvalidRecord},
		{"control batch", func(t *testing.T) []byte {
			return kmsgBatch(t, NoCompression, testRecords(1, 4), func(rb *kmsg.RecordBatch) {
				rb.Attributes |= ControlBit | TransactionalBit
				rb.ProducerID, rb.ProducerEpoch, rb.FirstSequence = 5, 0, 0
			})
		}, nil, kerr.InvalidRecord},
		{"producer id without sequence", func(t *testing.T) []byte {
			return kmsgBatch(t, NoCompression, testRecords(1, 4), func(rb *kmsg.RecordBatch) { rb.ProducerID, rb.ProducerEpoch = 5, 0 })
		}, nil, kerr.InvalidRecord},
		{"transactional without producer id", func(t *testing.T) []byte {
			return kmsgBatch(t, NoCompression, testRecords(1, 4), func(rb *kmsg.RecordBatch) { rb.Attributes |= TransactionalBit })
		}, nil, kerr.InvalidRecord},
		{"unknown codec", func(t *testing.T) []byte {
			return kmsgBatch(t, NoCompression, testRecords(1, 4), func(rb *kmsg.RecordBatch) { rb.Attributes |= 5 })
		}, nil, kerr.UnsupportedCompressionType},
		{"zstd before produce v7", func(t *testing.T) []byte { return kmsgBatch(t, ZstdCompression, testRecords(2, 4), nil) },
			func(o *ValidateOptions) { o.ProduceVersion = 6 }, kerr.UnsupportedCompressionType},
		{"too large", good, func(o *ValidateOptions) { o.MaxMessageBytes = 70 }, kerr.MessageTooLarge},
		{"above segment size", good, func(o *ValidateOptions) { o.SegmentBytes = 70 }, kerr.RecordListTooLarge},
		{"garbage gzip", func(t *testing.T) []byte {
			return kmsgBatch(t, NoCompression, testRecords(1, 4), func(rb *kmsg.RecordBatch) {
				rb.Attributes = GzipCompression
				rb.Records = []byte("not gzip at all")
			})
		}, nil, kerr.CorruptMessage},
		{"record length overruns", func(t *testing.T) []byte {
			return rewrite(good(t), func(b []byte) { b[HeaderSize] = 0x7e })
		}, nil, kerr.InvalidRecord},
		{"non-sequential offset delta", func(t *testing.T) []byte {
			recs := testRecords(3, 10)
			recs[1].OffsetDelta = 2
			return kmsgBatch(t, NoCompression, recs, nil)
		}, nil, kerr.InvalidRecord},
		{"producer sets LogAppendTime", func(t *testing.T) []byte {
			recs := testRecords(2, 4)
			return kmsgBatch(t, NoCompression, recs, func(rb *kmsg.RecordBatch) { rb.Attributes |= TimestampTypeBit })
		}, func(o *ValidateOptions) { o.TimestampType = LogAppendTime }, kerr.InvalidTimestamp},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts := defaultOpts()
			if c.opts != nil {
				c.opts(&opts)
			}
			_, err := Validate(context.Background(), c.batch(t), opts)
			wantCode(t, err, c.code)
		})
	}
}

func TestValidateCompactedNeedsKeysPerRecord(t *testing.T) {
	for _, c := range codecs {
		t.Run(c.name, func(t *testing.T) {
			recs := testRecords(5, 10)
			recs[1].Key, recs[3].Key = nil, nil
			opts := defaultOpts()
			opts.Compacted = true
			_, err := Validate(context.Background(), kmsgBatch(t, c.id, recs, nil), opts)
			ve := wantCode(t, err, kerr.InvalidRecord)
			if len(ve.RecordErrors) != 2 || ve.RecordErrors[0].BatchIndex != 1 || ve.RecordErrors[1].BatchIndex != 3 {
				t.Fatalf("record errors %+v", ve.RecordErrors)
			}
			opts.Compacted = false
			if _, err := Validate(context.Background(), kmsgBatch(t, c.id, recs, nil), opts); err != nil {
				t.Fatalf("keyless records refused on a non-compacted topic: %v", err)
			}
		})
	}
}

func TestValidateCreateTimeBounds(t *testing.T) {
	recs := testRecords(4, 10)
	recs[0].TimestampDelta64 = -10_000 // 10 s old
	recs[2].TimestampDelta64 = 7_200_000
	opts := defaultOpts()
	opts.TimestampBeforeMaxMs = 5_000
	// A keyless record too, on a compacted topic: any timestamp error makes
	// the whole answer INVALID_TIMESTAMP, as Kafka does.
	recs[3].Key = nil
	opts.Compacted = true
	_, err := Validate(context.Background(), kmsgBatch(t, NoCompression, recs, nil), opts)
	ve := wantCode(t, err, kerr.InvalidTimestamp)
	if len(ve.RecordErrors) != 3 {
		t.Fatalf("record errors %+v", ve.RecordErrors)
	}
	// -1 means no timestamp and is never out of range.
	opts = defaultOpts()
	opts.TimestampBeforeMaxMs = 0
	recs = testRecords(1, 1)
	recs[0].TimestampDelta64 = 0
	b := kmsgBatch(t, NoCompression, recs, func(rb *kmsg.RecordBatch) { rb.FirstTimestamp, rb.MaxTimestamp = -1, -1 })
	res, err := Validate(context.Background(), b, opts)
	if err != nil {
		t.Fatalf("NO_TIMESTAMP refused: %v", err)
	}
	if res.MaxTimestamp != -1 {
		t.Fatalf("max timestamp %d for a record without one", res.MaxTimestamp)
	}
}

func TestValidateLogAppendTimeRewritesTimestampAndCRC(t *testing.T) {
	for _, c := range codecs {
		t.Run(c.name, func(t *testing.T) {
			b := kmsgBatch(t, c.id, testRecords(3, 10), nil)
			body := append([]byte(nil), b[HeaderSize:]...)
			opts := defaultOpts()
			opts.TimestampType = LogAppendTime
			opts.NowMs = testNow + 99
			res, err := Validate(context.Background(), b, opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := CheckCRC(b); err != nil {
				t.Fatal(err)
			}
			h, _ := ParseHeader(b)
			if !h.IsLogAppendTime() || h.MaxTimestamp != testNow+99 || h.BaseTimestamp != testNow {
				t.Fatalf("header %+v", h)
			}
			if res.Batches[0].Header != h || res.LogAppendTimeMs != testNow+99 || res.MaxTimestamp != testNow+99 {
				t.Fatalf("result %+v vs header %+v", res, h)
			}
			if string(body) != string(b[HeaderSize:]) {
				t.Fatal("records were re-encoded")
			}
			if err := ForEachRecord(b, func(r Record) error {
				if r.Timestamp(h) != testNow+99 {
					t.Fatalf("record timestamp %d", r.Timestamp(h))
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestValidateFixesWrongMaxTimestamp(t *testing.T) {
	b := kmsgBatch(t, NoCompression, testRecords(3, 10), func(rb *kmsg.RecordBatch) { rb.MaxTimestamp = 5 })
	res, err := Validate(context.Background(), b, defaultOpts())
	if err != nil {
		t.Fatal(err)
	}
	h, _ := ParseHeader(b)
	if h.MaxTimestamp != testNow+2 || res.Batches[0].Header.MaxTimestamp != testNow+2 {
		t.Fatalf("max timestamp %d", h.MaxTimestamp)
	}
	if err := CheckCRC(b); err != nil {
		t.Fatal(err)
	}
}

func TestValidateInternalAllowsControlBatches(t *testing.T) {
	opts := BuilderOptions{ProducerID: 9, ProducerEpoch: 1, BaseSequence: -1, LogAppendTimeMs: -1, BaseOffset: 40}
	b, err := BuildEndTxnMarker(opts, true, 3, testNow)
	if err != nil {
		t.Fatal(err)
	}
	vopts := defaultOpts()
	_, err = Validate(context.Background(), append([]byte(nil), b...), vopts)
	wantCode(t, err, kerr.InvalidRecord)
	vopts.Internal = true
	if _, err := Validate(context.Background(), b, vopts); err != nil {
		t.Fatal(err)
	}
}

func TestSaturatingArithmetic(t *testing.T) {
	if got := satSub(testNow, math.MaxInt64); got != testNow-math.MaxInt64 {
		t.Fatalf("satSub(now, MaxInt64) = %d", got)
	}
	if satAdd(math.MaxInt64-1, 10) != math.MaxInt64 || satSub(math.MinInt64+1, 10) != math.MinInt64 {
		t.Fatal("saturation failed")
	}
	if satSub(0, math.MinInt64) != math.MaxInt64 {
		t.Fatal("satSub(0, MinInt64)")
	}
}
