package records

import (
	"bytes"
	"encoding/binary"
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
	zstdDecoders sync.Pool // *zstd.Decoder
	zstdEncoders sync.Pool // *zstd.Encoder
	gzipWriters  sync.Pool // *gzip.Writer
	lz4Writers   sync.Pool // *lz4.Writer
	scratchBufs  = sync.Pool{New: func() any { return new(scratchBuffer) }}
)

// decompress appends the decompressed form of src (codec) to dst, refusing
// output longer than limit.
func decompress(dst *bytes.Buffer, codec int, src []byte, limit int) error {
	if limit <= 0 {
		limit = DefaultMaxUncompressedBytes
	}
	var err error
	switch codec {
	case GzipCompression:
		err = decompressGzip(dst, src, limit)
	case SnappyCompression:
		err = decompressSnappy(dst, src, limit)
	case LZ4Compression:
		err = decompressLZ4(dst, src, limit)
	case ZstdCompression:
		err = decompressZstd(dst, src, limit)
	default:
		return fmt.Errorf("%w: %d", ErrUnknownCompression, codec)
	}
	if err != nil {
		return fmt.Errorf("%w (%s): %w", ErrDecompress, codecName(codec), err)
	}
	return nil
}

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

// copyBounded drains r into dst, failing once more than limit bytes came out.
func copyBounded(dst *bytes.Buffer, r io.Reader, limit int) error {
	start := dst.Len()
	if _, err := dst.ReadFrom(io.LimitReader(r, int64(limit)+1)); err != nil {
		return err
	}
	if dst.Len()-start > limit {
		return fmt.Errorf("decompressed size exceeds %d bytes", limit)
	}
	return nil
}

func decompressGzip(dst *bytes.Buffer, src []byte, limit int) error {
	zr, _ := gzipReaders.Get().(*gzip.Reader)
	var err error
	if zr == nil {
		zr, err = gzip.NewReader(bytes.NewReader(src))
	} else {
		err = zr.Reset(bytes.NewReader(src))
	}
	if err != nil {
		return err
	}
	defer gzipReaders.Put(zr)
	return copyBounded(dst, zr, limit)
}

func decompressLZ4(dst *bytes.Buffer, src []byte, limit int) error {
	zr, _ := lz4Readers.Get().(*lz4.Reader)
	if zr == nil {
		zr = lz4.NewReader(nil)
	}
	zr.Reset(bytes.NewReader(src))
	defer lz4Readers.Put(zr)
	return copyBounded(dst, zr, limit)
}

func decompressZstd(dst *bytes.Buffer, src []byte, limit int) error {
	dec, _ := zstdDecoders.Get().(*zstd.Decoder)
	if dec == nil {
		// Concurrency 1 decodes synchronously: no goroutines to own or stop,
		// so a decoder dropped by the pool needs no Close.
		var err error
		dec, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderMaxMemory(uint64(DefaultMaxUncompressedBytes)))
		if err != nil {
			return err
		}
	}
	if err := dec.Reset(bytes.NewReader(src)); err != nil {
		return err
	}
	err := copyBounded(dst, dec, limit)
	// Drop the reference to src before pooling.
	_ = dec.Reset(bytes.NewReader(nil))
	zstdDecoders.Put(dec)
	return err
}

func decompressSnappy(dst *bytes.Buffer, src []byte, limit int) error {
	if !bytes.HasPrefix(src, xerialMagic) {
		return snappyBlock(dst, src, limit)
	}
	if len(src) < xerialHeaderSize {
		return errors.New("truncated xerial snappy header")
	}
	rest := src[xerialHeaderSize:]
	start := dst.Len()
	for len(rest) > 0 {
		if len(rest) < 4 {
			return errors.New("truncated xerial snappy chunk length")
		}
		n := binary.BigEndian.Uint32(rest)
		rest = rest[4:]
		if uint64(n) > uint64(len(rest)) {
			return fmt.Errorf("xerial snappy chunk of %d bytes with %d left", n, len(rest))
		}
		if err := snappyBlock(dst, rest[:n], limit-(dst.Len()-start)); err != nil {
			return err
		}
		rest = rest[n:]
	}
	return nil
}

// snappyBlock decodes one raw snappy block (s2 reads the snappy format).
func snappyBlock(dst *bytes.Buffer, src []byte, limit int) error {
	n, err := s2.DecodedLen(src)
	if err != nil {
		return err
	}
	if n > limit {
		return fmt.Errorf("decompressed size %d exceeds %d bytes", n, limit)
	}
	dst.Grow(n)
	out, err := s2.Decode(dst.AvailableBuffer()[:n], src)
	if err != nil {
		return err
	}
	dst.Write(out) // out is dst's own spare capacity, so this moves no bytes twice
	return nil
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

// scratchBuffer holds decompressed records during validation.
type scratchBuffer struct{ bytes.Buffer }

// maxPooledScratch keeps one huge batch from pinning its buffer in the pool.
const maxPooledScratch = 8 << 20

func releaseScratch(b *scratchBuffer) {
	if b.Cap() > maxPooledScratch {
		return
	}
	b.Reset()
	scratchBufs.Put(b)
}
