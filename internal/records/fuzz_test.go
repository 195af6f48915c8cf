package records

import (
	"context"
	"errors"
	"testing"
)

// The committed corpora under testdata/fuzz/ hold valid batches for every
// codec (built by kmsg + kgo and by Builder, plus xerial snappy) and
// mutations of them.

func FuzzValidate(f *testing.F) {
	f.Add(kmsgBatch(f, NoCompression, testRecords(2, 8), nil), false)
	f.Fuzz(func(t *testing.T, data []byte, logAppendTime bool) {
		b := append([]byte(nil), data...)
		opts := defaultOpts()
		opts.Compacted = len(data)%2 == 1
		opts.Decoder = NewDecoder(nil, 1<<22)
		if logAppendTime {
			opts.TimestampType = LogAppendTime
		}
		res, err := Validate(context.Background(), b, opts)
		if err != nil {
			var ve *ValidationError
			if !errors.As(err, &ve) || ve.Err == nil {
				t.Fatalf("refusal without a Kafka code: %v", err)
			}
			return
		}
		if len(res.Batches) != 1 || res.Batches[0].End != len(b) {
			t.Fatalf("accepted result %+v does not cover %d bytes", res, len(b))
		}
		if err := CheckCRC(b); err != nil {
			t.Fatalf("accepted batch has a bad CRC after rewrite: %v", err)
		}
		// The log trusts a Validated's header instead of parsing again:
		// it must be the stored bytes' header, over exactly those bytes.
		v := &res.Validated
		if h, err := ParseHeader(b); err != nil || len(v.Headers()) != 1 || v.Headers()[0] != h ||
			len(v.Bytes()) != len(b) || &v.Bytes()[0] != &b[0] || h.Size() != int64(len(b)) {
			t.Fatalf("Validated %+v does not describe the %d accepted bytes (header %+v, %v)", v.Headers(), len(b), h, err)
		}
		var n int32
		if err := ForEachRecord(b, func(Record) error { n++; return nil }); err != nil {
			t.Fatalf("accepted batch does not iterate: %v", err)
		}
		if n != res.Batches[0].RecordCount {
			t.Fatalf("iterated %d records, validated %d", n, res.Batches[0].RecordCount)
		}
	})
}

func FuzzParseHeader(f *testing.F) {
	f.Add(kmsgBatch(f, NoCompression, testRecords(1, 8), nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := ParseHeader(data)
		if err == nil {
			if h.Size() < HeaderSize || h.Magic != CurrentMagic {
				t.Fatalf("accepted header %+v", h)
			}
			_ = h.LastSequence()
		}
		rest, err := Batches(data, func(h Header, batch []byte) error {
			if int64(len(batch)) != h.Size() {
				t.Fatalf("batch of %d bytes, header says %d", len(batch), h.Size())
			}
			return nil
		})
		if rest < 0 || rest > len(data) {
			t.Fatalf("rest %d outside [0, %d] (err %v)", rest, len(data), err)
		}
	})
}

func FuzzForEachRecord(f *testing.F) {
	f.Add(kmsgBatch(f, GzipCompression, testRecords(2, 8), nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := ParseHeader(data)
		var n int32
		err2 := ForEachRecord(data, func(Record) error { n++; return nil })
		if err2 == nil && (err != nil || n != h.RecordCount) {
			t.Fatalf("iterated %d records of %d (header error %v)", n, h.RecordCount, err)
		}
	})
}
