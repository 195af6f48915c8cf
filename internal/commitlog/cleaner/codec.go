package cleaner

import (
	"bytes"
	"fmt"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/sluice-io/sluice/internal/records"
)

// compressor re-compresses the records of rewritten batches with their
// original codec, as Kafka's cleaner does. One per cleaner thread: its
// encoders are reused and never shared.
type compressor struct {
	buf  bytes.Buffer
	gzip *gzip.Writer
	lz4  *lz4.Writer
	zstd *zstd.Encoder
}

// compress appends src compressed with codec to dst.
func (c *compressor) compress(dst []byte, codec int, src []byte) ([]byte, error) {
	switch codec {
	case records.NoCompression:
		return append(dst, src...), nil
	case records.SnappyCompression:
		// Raw snappy, as franz-go and the records package write it.
		return append(dst, s2.EncodeSnappy(nil, src)...), nil
	case records.ZstdCompression:
		if c.zstd == nil {
			enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
			if err != nil {
				return nil, fmt.Errorf("zstd encoder: %w", err)
			}
			c.zstd = enc
		}
		return c.zstd.EncodeAll(src, dst), nil
	case records.GzipCompression:
		c.buf.Reset()
		if c.gzip == nil {
			c.gzip = gzip.NewWriter(&c.buf)
		} else {
			c.gzip.Reset(&c.buf)
		}
		return c.finishStream(dst, c.gzip, src)
	case records.LZ4Compression:
		c.buf.Reset()
		if c.lz4 == nil {
			c.lz4 = lz4.NewWriter(&c.buf)
		} else {
			c.lz4.Reset(&c.buf)
		}
		return c.finishStream(dst, c.lz4, src)
	}
	return nil, fmt.Errorf("%w: %d", records.ErrUnknownCompression, codec)
}

type streamWriter interface {
	Write([]byte) (int, error)
	Close() error
}

func (c *compressor) finishStream(dst []byte, w streamWriter, src []byte) ([]byte, error) {
	if _, err := w.Write(src); err != nil {
		return nil, fmt.Errorf("compress: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("compress: %w", err)
	}
	return append(dst, c.buf.Bytes()...), nil
}

// close releases the zstd encoder's goroutines.
func (c *compressor) close() {
	if c.zstd != nil {
		c.zstd.Close()
		c.zstd = nil
	}
}
