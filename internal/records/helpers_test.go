package records

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/klauspost/compress/s2"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// testNow is the broker clock used by tests.
const testNow int64 = 1_700_000_000_000

// codecs lists every codec id with a name for subtests.
var codecs = []struct {
	name string
	id   int
}{
	{"none", NoCompression}, {"gzip", GzipCompression}, {"snappy", SnappyCompression},
	{"lz4", LZ4Compression}, {"zstd", ZstdCompression},
}

func defaultOpts() ValidateOptions {
	return ValidateOptions{
		NowMs:                testNow,
		TimestampBeforeMaxMs: math.MaxInt64,
		TimestampAfterMaxMs:  3_600_000,
		MaxMessageBytes:      1048588,
	}
}

// kgoCodec is franz-go's producer-side codec for our codec id.
func kgoCodec(id int) kgo.CompressionCodec {
	switch id {
	case GzipCompression:
		return kgo.GzipCompression()
	case SnappyCompression:
		return kgo.SnappyCompression()
	case LZ4Compression:
		return kgo.Lz4Compression()
	case ZstdCompression:
		return kgo.ZstdCompression()
	}
	return kgo.NoCompression()
}

// testRecords makes n kmsg records with keys, values, headers and rising
// timestamps (delta i).
func testRecords(n, valueSize int) []kmsg.Record {
	recs := make([]kmsg.Record, n)
	for i := range recs {
		v := bytes.Repeat([]byte{byte('a' + i%26)}, valueSize)
		recs[i] = kmsg.Record{
			TimestampDelta64: int64(i),
			OffsetDelta:      int32(i),
			Key:              fmt.Appendf(nil, "key-%d", i),
			Value:            v,
			Headers:          []kmsg.Header{{Key: "h", Value: []byte{byte(i)}}},
		}
	}
	return recs
}

// encodeKmsgRecords encodes records the way franz-go's producer does.
func encodeKmsgRecords(recs []kmsg.Record) []byte {
	var out []byte
	for i := range recs {
		r := recs[i]
		r.Length = 0
		body := len(r.AppendTo(nil)) - 1 // varint(0) is one byte
		r.Length = int32(body)
		out = r.AppendTo(out)
	}
	return out
}

// kmsgBatch builds a batch with kmsg's encoding and kgo's compressor.
// mutate may change the batch before the CRC is computed.
func kmsgBatch(t testing.TB, codec int, recs []kmsg.Record, mutate func(*kmsg.RecordBatch)) []byte {
	t.Helper()
	raw := encodeKmsgRecords(recs)
	payload := raw
	if codec != NoCompression {
		c, err := kgo.DefaultCompressor(kgoCodec(codec))
		if err != nil {
			t.Fatal(err)
		}
		out, used := c.Compress(new(bytes.Buffer), raw)
		if int(used) != codec {
			t.Fatalf("kgo compressed with %d, want %d", used, codec)
		}
		payload = append([]byte(nil), out...)
	}
	var maxTs int64 = -1
	for _, r := range recs {
		maxTs = max(maxTs, testNow+r.TimestampDelta64)
	}
	rb := kmsg.RecordBatch{
		Magic: 2, Attributes: int16(codec), LastOffsetDelta: int32(len(recs) - 1),
		FirstTimestamp: testNow, MaxTimestamp: maxTs, ProducerID: -1, ProducerEpoch: -1,
		FirstSequence: -1, NumRecords: int32(len(recs)), Records: payload,
	}
	if mutate != nil {
		mutate(&rb)
	}
	rb.Length = int32(HeaderSize - LogOverhead + len(rb.Records))
	b := rb.AppendTo(nil)
	UpdateCRC(b)
	return b
}

// xerialSnappy frames raw in the snappy-java stream format, in chunks.
func xerialSnappy(raw []byte, chunk int) []byte {
	out := append([]byte(nil), xerialMagic...)
	out = binary.BigEndian.AppendUint32(out, 1)
	out = binary.BigEndian.AppendUint32(out, 1)
	for len(raw) > 0 {
		n := min(chunk, len(raw))
		block := s2.EncodeSnappy(nil, raw[:n])
		out = binary.BigEndian.AppendUint32(out, uint32(len(block)))
		out = append(out, block...)
		raw = raw[n:]
	}
	return out
}

// rewrite changes a batch's bytes with fn and fixes its CRC.
func rewrite(b []byte, fn func(b []byte)) []byte {
	b = append([]byte(nil), b...)
	fn(b)
	UpdateCRC(b)
	return b
}

// decompressAll decompresses src (codec) within limit into fresh storage.
func decompressAll(codec int, src []byte, limit int) ([]byte, error) {
	out, err := decompressRecords(context.Background(), nil, codec, src, limit, false, nil)
	return out.data, err
}

// mustHeaders lists r's headers.
func mustHeaders(t testing.TB, r Record) []RecordHeader {
	t.Helper()
	hs, err := r.Headers(1 << 10)
	if err != nil {
		t.Fatal(err)
	}
	return hs
}
