package records

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// ErrUnknownCompression reports a codec id outside 0..4.
var ErrUnknownCompression = errors.New("records: unknown compression codec")

// ErrDecompress reports compressed records that do not decompress.
var ErrDecompress = errors.New("records: cannot decompress records")

// DefaultMaxUncompressedBytes bounds how far one batch may expand when
// decompressed, so a small hostile batch cannot exhaust memory.
const DefaultMaxUncompressedBytes = 256 << 20

// xerialMagic opens the framed snappy stream that snappy-java (the Java
// client) writes: magic, then int32 version and int32 minimum compatible
// version, then chunks of int32 length + raw snappy block.
var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

const xerialHeaderSize = 16

// Caches of expensive codec state. sync.Pools are the only package-level
// state: they hold no data between calls.
var (
	gzipReaders  sync.Pool // *gzip.Reader
	lz4Readers   sync.Pool // *lz4.Reader
	zstdStreams  sync.Pool // *zstd.Decoder for streams (counting)
	zstdBlobs    sync.Pool // *zstd.Decoder for DecodeAll, limited to dst's capacity
	zstdEncoders sync.Pool // *zstd.Encoder
	gzipWriters  sync.Pool // *gzip.Writer
	lz4Writers   sync.Pool // *lz4.Writer
	scratchBufs  = sync.Pool{New: func() any { return new(scratchBuffer) }}
)

func codecName(codec int) string {
	switch codec {
	case NoCompression:
		return "none"
	case GzipCompression:
		return "gzip"
	case SnappyCompression:
		return "snappy"
	case LZ4Compression:
		return "lz4"
	case ZstdCompression:
		return "zstd"
	}
	return fmt.Sprintf("codec %d", codec)
}

// compress appends src compressed with codec to dst.
func compress(dst []byte, codec int, src []byte) ([]byte, error) {
	switch codec {
	case NoCompression:
		return append(dst, src...), nil
	case GzipCompression:
		return compressStream(dst, src, &gzipWriters, func(w io.Writer) streamWriter {
			return gzip.NewWriter(w)
		})
	case SnappyCompression:
		// Raw snappy, as franz-go writes it; every Kafka reader accepts it.
		return append(dst, s2.EncodeSnappy(nil, src)...), nil
	case LZ4Compression:
		return compressStream(dst, src, &lz4Writers, func(w io.Writer) streamWriter {
			return lz4.NewWriter(w)
		})
	case ZstdCompression:
		enc, _ := zstdEncoders.Get().(*zstd.Encoder)
		if enc == nil {
			var err error
			enc, err = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
			if err != nil {
				return nil, fmt.Errorf("records: zstd encoder: %w", err)
			}
		}
		defer zstdEncoders.Put(enc)
		return enc.EncodeAll(src, dst), nil
	}
	return nil, fmt.Errorf("%w: %d", ErrUnknownCompression, codec)
}

type streamWriter interface {
	io.WriteCloser
	Reset(io.Writer)
}

func compressStream(dst, src []byte, pool *sync.Pool, mk func(io.Writer) streamWriter) ([]byte, error) {
	buf := bytes.NewBuffer(dst)
	w, _ := pool.Get().(streamWriter)
	if w == nil {
		w = mk(buf)
	} else {
		w.Reset(buf)
	}
	defer pool.Put(w)
	if _, err := w.Write(src); err != nil {
		return nil, fmt.Errorf("records: compress: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("records: compress: %w", err)
	}
	w.Reset(nil)
	return buf.Bytes(), nil
}

// scratchBuffer holds decompressed records while they are read.
type scratchBuffer struct{ b []byte }

// maxPooledScratch keeps one huge batch from pinning its buffer in the pool.
const maxPooledScratch = 8 << 20

// getScratch returns a pooled buffer of at least n bytes (n beyond
// maxPooledScratch gets a fresh one, which release drops).
func getScratch(n int) *scratchBuffer {
	s := scratchBufs.Get().(*scratchBuffer)
	if cap(s.b) < n {
		s.b = make([]byte, n)
	}
	return s
}

func releaseScratch(s *scratchBuffer) {
	if cap(s.b) > maxPooledScratch {
		s.b = nil
	}
	scratchBufs.Put(s)
}
