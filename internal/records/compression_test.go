package records

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/testutil"
)

// TestValidateAcceptsLZ4FrameVariants covers the frame options other
// clients write: Kafka's Java client uses 64 KiB independent blocks and no
// content size; others add block or content checksums, or the content size.
func TestValidateAcceptsLZ4FrameVariants(t *testing.T) {
	recs := testRecords(200, 500) // ~100 KiB: more than one 64 KiB block
	raw := encodeKmsgRecords(recs)
	variants := map[string][]lz4.Option{
		"java":            {lz4.BlockSizeOption(lz4.Block64Kb), lz4.ChecksumOption(false)},
		"block checksums": {lz4.BlockSizeOption(lz4.Block64Kb), lz4.BlockChecksumOption(true)},
		"content size":    {lz4.BlockSizeOption(lz4.Block256Kb), lz4.SizeOption(uint64(len(raw)))},
	}
	for name, opts := range variants {
		t.Run(name, func(t *testing.T) {
			var frame bytes.Buffer
			w := lz4.NewWriter(&frame)
			if err := w.Apply(opts...); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write(raw); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			b := kmsgBatch(t, NoCompression, recs, func(rb *kmsg.RecordBatch) {
				rb.Attributes = LZ4Compression
				rb.Records = frame.Bytes()
			})
			res, err := Validate(context.Background(), b, defaultOpts())
			if err != nil {
				t.Fatal(err)
			}
			if res.Batches[0].RecordCount != 200 {
				t.Fatalf("count %d", res.Batches[0].RecordCount)
			}
		})
	}
}

// TestSnappyFormatsDecodeAlike checks raw and xerial-framed snappy give
// the same bytes, including an empty xerial stream.
func TestSnappyFormatsDecodeAlike(t *testing.T) {
	raw := bytes.Repeat([]byte("snappy records "), 5000)
	rawBlock, err := compress(nil, SnappyCompression, raw)
	if err != nil {
		t.Fatal(err)
	}
	for name, src := range map[string][]byte{"raw": rawBlock, "xerial": xerialSnappy(raw, 32<<10)} {
		out, err := decompressAll(SnappyCompression, src, 0)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(out, raw) {
			t.Fatalf("%s: decoded bytes differ", name)
		}
	}
	if out, err := decompressAll(SnappyCompression, xerialSnappy(nil, 1), 0); err != nil || len(out) != 0 {
		t.Fatalf("empty xerial stream: %v, %d bytes", err, len(out))
	}
	bad := xerialSnappy(raw, 32<<10)
	if _, err := decompressAll(SnappyCompression, bad[:len(bad)-10], 0); err == nil {
		t.Fatal("truncated xerial chunk accepted")
	}
}

// TestPooledCodecsAreSafeConcurrently validates batches of every codec from
// several goroutines (run with -race) and checks the pooled zstd decoders
// start no goroutines of their own.
func TestPooledCodecsAreSafeConcurrently(t *testing.T) {
	var batches [][]byte
	for _, c := range codecs {
		batches = append(batches, kmsgBatch(t, c.id, testRecords(10, 200), nil))
	}
	before := runtime.NumGoroutine()
	var wg sync.WaitGroup
	errs := make(chan error, 4*len(batches))
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				for _, b := range batches {
					if _, err := Validate(context.Background(), append([]byte(nil), b...), defaultOpts()); err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// A worker is still counted for a moment after its wg.Done, so the
	// count is given a second to settle; a codec's own goroutine would not
	// go away.
	testutil.EventuallyNoError(t, time.Second, func() error {
		if after := runtime.NumGoroutine(); after > before {
			return fmt.Errorf("%d goroutines before, %d after", before, after)
		}
		return nil
	}, "a codec leaked goroutines")
}
