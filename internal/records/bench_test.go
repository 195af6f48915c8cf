package records

import (
	"context"
	"testing"
)

// BenchmarkValidate validates a 16 KiB batch of 1 KiB records (the Java
// producer's default batch.size) per codec; MB/s counts the batch's
// uncompressed record bytes.
func BenchmarkValidate(b *testing.B) {
	for _, c := range codecs {
		b.Run(c.name, func(b *testing.B) {
			recs := testRecords(16, 1024)
			for i := range recs {
				// Vary the values so compression does real work.
				for j := range recs[i].Value {
					recs[i].Value[j] = byte((i*131 + j*j) % 251)
				}
			}
			batch := kmsgBatch(b, c.id, recs, nil)
			work := make([]byte, len(batch))
			opts := defaultOpts()
			b.SetBytes(int64(len(encodeKmsgRecords(recs))))
			b.ReportAllocs()
			for b.Loop() {
				copy(work, batch)
				if _, err := Validate(context.Background(), work, opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
