package records

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// How a batch is decompressed within bounded memory. Its size is known
// before any output is kept, so nothing grows by doubling and a bomb is
// refused without holding its output:
//   - snappy declares the size of each block, and zstd frames usually
//     declare theirs (franz-go's always do): the records go straight into
//     a buffer of exactly that size, reserved against the Budget first;
//   - otherwise (gzip, lz4, zstd frames without a size: the Java client's)
//     a first try decodes into a buffer of a few times the compressed size.
//     Most batches fit. For one that does not, the records in the bytes
//     that fit are checked first (walkPrefix: a bomb of garbage stops
//     there); then it is decoded once more to count its size, keeping
//     nothing, and refused above the per-batch cap or short of what its
//     first records claim; else it is decoded a third time into a buffer
//     of exactly that size.
//
// The Budget holds each buffer's bytes while its records are read, and a
// count's decoder state (a gzip window of 32 KiB, lz4 blocks up to 4 MiB, a
// zstd window up to zstdMaxStreamWindow) while it runs; a decoder never
// waits for budget while holding some.

// Sizes of the first try: firstTryRatio times the compressed size, at
// least firstTryMin, at most the per-batch cap.
const (
	firstTryRatio = 8
	firstTryMin   = 64 << 10
)

// zstdMaxStreamWindow bounds the window of a zstd frame decoded as a
// stream (only to count an undeclared size): 8 MiB, the size the zstd
// format recommends every decoder supports. A frame with a larger window
// is given the whole per-batch cap instead.
const zstdMaxStreamWindow = 8 << 20

// errTooLarge reports records beyond the per-batch cap.
var errTooLarge = errors.New("decompressed size exceeds the limit")

// decompressed is one batch's records section, decompressed into storage
// reserved against a budget until release.
type decompressed struct {
	data    []byte
	scratch *scratchBuffer // pooled storage to give back; nil when fresh
	budget  *Budget
	held    int64
}

func (d *decompressed) release() {
	d.budget.release(d.held)
	d.held = 0
	if d.scratch != nil {
		releaseScratch(d.scratch)
		d.scratch = nil
	}
	d.data = nil
}

// decompressRecords decompresses src (codec) into at most limit bytes,
// reserving them against budget (nil: none). With pooled, the storage comes
// from the scratch pool and returns there on release; otherwise it is fresh
// and the caller may keep slices of it. Errors other than the budget wait's
// wrap ErrDecompress.
//
// check, when not nil, is given the first bytes of records too large for the
// first try (see walkPrefix): its error refuses them at once, and the size
// it says the records need at least refuses them once counted.
func decompressRecords(ctx context.Context, budget *Budget, codec int, src []byte, limit int, pooled bool, check func([]byte) (int64, error)) (decompressed, error) {
	if limit <= 0 {
		limit = DefaultMaxUncompressedBytes
	}
	size, exact, err := declaredSize(codec, src, limit)
	if err != nil {
		return decompressed{}, decompressError(codec, err)
	}
	if !exact {
		out, fits, need, err := firstTry(ctx, budget, codec, src, limit, pooled, check)
		if err != nil || fits {
			return out, err
		}
		if size, exact, err = countWithin(ctx, budget, codec, src, limit); err != nil {
			return decompressed{}, err
		}
		if exact && size <= limit && need > int64(size) {
			return decompressed{}, fmt.Errorf("%w: a record needs the records to reach byte %d, they have %d", ErrInvalidRecord, need, size)
		}
	}
	if size > limit {
		return decompressed{}, decompressError(codec, fmt.Errorf("%w: %d bytes or more, limit %d", errTooLarge, size, limit))
	}
	return decodeSized(ctx, budget, codec, src, size, exact, pooled)
}

func decompressError(codec int, err error) error {
	return fmt.Errorf("%w (%s): %w", ErrDecompress, codecName(codec), err)
}

// reserve takes n bytes of budget and storage for them.
func reserve(ctx context.Context, budget *Budget, n int, pooled bool) (decompressed, []byte, error) {
	held, err := budget.acquire(ctx, int64(n))
	if err != nil {
		return decompressed{}, nil, err
	}
	out := decompressed{budget: budget, held: held}
	if !pooled {
		return out, make([]byte, n), nil
	}
	out.scratch = getScratch(n)
	return out, out.scratch.b[:n], nil
}

// firstTry decodes a batch of undeclared size into a buffer sized from the
// compressed size. fits is false, with no error and nothing held, when the
// records do not fit (or, for zstd, when the decoder cannot tell an
// oversized frame from a bad one: counting decides) and check finds no
// fault in the bytes that fit; need is then the size check says they need.
func firstTry(ctx context.Context, budget *Budget, codec int, src []byte, limit int, pooled bool, check func([]byte) (int64, error)) (decompressed, bool, int64, error) {
	first := min(limit, max(firstTryMin, len(src)*firstTryRatio))
	out, buf, err := reserve(ctx, budget, first, pooled)
	if err != nil {
		return decompressed{}, false, 0, err
	}
	n, more, err := firstTryInto(codec, src, buf)
	var need int64
	if err == nil && more && n >= 0 && check != nil {
		need, err = check(buf[:n])
	} else if err != nil {
		err = decompressError(codec, err)
	}
	if err != nil || more {
		out.release()
		return decompressed{}, false, need, err
	}
	out.data = buf[:n]
	return out, true, 0, nil
}

// firstTryInto is decodeInto for a first try, where the bytes that fit
// matter too (check walks them): zstd is decoded as a stream, unless its
// window is too large to stream in bounded memory. n < 0 with more says
// the bytes that fit are not known.
func firstTryInto(codec int, src, dst []byte) (int, bool, error) {
	if codec != ZstdCompression {
		return decodeInto(codec, src, dst)
	}
	n, more, err := streamInto(codec, src, dst)
	if !isZstdWindowError(err) {
		return n, more, err
	}
	if n, _, err = zstdInto(src, dst); err != nil {
		// DecodeAll stops at dst's end without saying so: no reliable
		// prefix (n < 0), and counting tells an oversized frame from a
		// bad one.
		return -1, true, nil
	}
	return n, false, nil
}

func isZstdWindowError(err error) bool {
	return errors.Is(err, zstd.ErrWindowSizeExceeded) || errors.Is(err, zstd.ErrDecoderSizeExceeded)
}

// decodeSized decodes a batch whose size is known into a buffer of that
// size: exactly when exact, at most otherwise.
func decodeSized(ctx context.Context, budget *Budget, codec int, src []byte, size int, exact, pooled bool) (decompressed, error) {
	out, buf, err := reserve(ctx, budget, size, pooled)
	if err != nil {
		return decompressed{}, err
	}
	n, more, err := decodeInto(codec, src, buf)
	switch {
	case err != nil:
	case more && exact:
		err = fmt.Errorf("decodes to more than the %d bytes declared or counted", size)
	case more:
		err = fmt.Errorf("%w: more than %d bytes", errTooLarge, size)
	case exact && n != size:
		err = fmt.Errorf("decodes to %d bytes, %d declared or counted", n, size)
	}
	if err != nil {
		out.release()
		return decompressed{}, decompressError(codec, err)
	}
	out.data = buf[:n]
	return out, nil
}

// declaredSize returns the decompressed size src declares, when its codec
// declares one (snappy always, zstd when every frame does). A size above
// limit is returned as soon as it is seen, for the caller to refuse.
func declaredSize(codec int, src []byte, limit int) (int, bool, error) {
	switch codec {
	case SnappyCompression:
		n, err := snappySize(src, limit)
		return n, err == nil, err
	case ZstdCompression:
		return zstdDeclaredSize(src, limit)
	}
	return 0, false, nil
}

// decodeInto decodes src into dst, reporting whether more output followed
// once dst was full.
func decodeInto(codec int, src, dst []byte) (int, bool, error) {
	switch codec {
	case GzipCompression, LZ4Compression:
		return streamInto(codec, src, dst)
	case SnappyCompression:
		return snappyInto(src, dst)
	case ZstdCompression:
		return zstdInto(src, dst)
	}
	return 0, false, fmt.Errorf("%w: %d", ErrUnknownCompression, codec)
}

// streamInto decodes src as a stream into dst.
func streamInto(codec int, src, dst []byte) (int, bool, error) {
	r, done, err := openStream(codec, src)
	if err != nil {
		return 0, false, err
	}
	defer done()
	return readInto(r, dst)
}

// countState is what a codec's stream decoder holds while counting: lz4
// blocks of up to 4 MiB, in and out; a zstd window and two blocks; gzip's
// 32 KiB window, with the read buffer.
func countState(codec int) int64 {
	switch codec {
	case LZ4Compression:
		return 8 << 20
	case ZstdCompression:
		return zstdMaxStreamWindow + 512<<10
	}
	return 128 << 10
}

// countWithin counts src's decompressed size (countDecoded) holding the
// decoder's state against the budget, so many counts at once wait too.
func countWithin(ctx context.Context, budget *Budget, codec int, src []byte, limit int) (int, bool, error) {
	held, err := budget.acquire(ctx, countState(codec))
	if err != nil {
		return 0, false, err
	}
	defer budget.release(held)
	n, exact, err := countDecoded(codec, src, limit)
	if err != nil {
		return 0, false, decompressError(codec, err)
	}
	return n, exact, nil
}

// countDecoded decodes src keeping nothing and returns its size (limit+1
// once past limit). A zstd stream whose window is too large to decode as a
// stream within bounded memory yields limit, not exact.
func countDecoded(codec int, src []byte, limit int) (int, bool, error) {
	r, done, err := openStream(codec, src)
	if err != nil {
		return 0, false, err
	}
	defer done()
	n, err := countStream(r, limit)
	if codec == ZstdCompression && isZstdWindowError(err) {
		return limit, false, nil
	}
	return n, true, err
}

// readInto fills dst from r and reports whether r had more.
func readInto(r io.Reader, dst []byte) (int, bool, error) {
	n := 0
	for n < len(dst) {
		m, err := r.Read(dst[n:])
		n += m
		if err == io.EOF {
			return n, false, nil
		}
		if err != nil {
			return n, false, err
		}
	}
	var probe [1]byte
	for {
		m, err := r.Read(probe[:])
		if m > 0 {
			return n, true, nil
		}
		if err == io.EOF {
			return n, false, nil
		}
		if err != nil {
			return n, false, err
		}
	}
}

// countStream reads r to its end through a pooled buffer, stopping once
// past limit.
func countStream(r io.Reader, limit int) (int, error) {
	s := getScratch(countChunk)
	defer releaseScratch(s)
	buf := s.b[:countChunk]
	n := 0
	for n <= limit {
		m, err := r.Read(buf)
		n += m
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

const countChunk = 64 << 10

// openStream returns a pooled streaming decoder over src and the function
// that gives it back.
func openStream(codec int, src []byte) (io.Reader, func(), error) {
	switch codec {
	case GzipCompression:
		zr, _ := gzipReaders.Get().(*gzip.Reader)
		var err error
		if zr == nil {
			zr, err = gzip.NewReader(bytes.NewReader(src))
		} else {
			err = zr.Reset(bytes.NewReader(src))
		}
		if err != nil {
			return nil, nil, err
		}
		return zr, func() { gzipReaders.Put(zr) }, nil
	case LZ4Compression:
		zr, _ := lz4Readers.Get().(*lz4.Reader)
		if zr == nil {
			zr = lz4.NewReader(nil)
		}
		zr.Reset(bytes.NewReader(src))
		return zr, func() { zr.Reset(nil); lz4Readers.Put(zr) }, nil
	case ZstdCompression:
		dec, _ := zstdStreams.Get().(*zstd.Decoder)
		if dec == nil {
			// Concurrency 1 decodes synchronously: no goroutines to own or
			// stop, so a decoder dropped by the pool needs no Close.
			var err error
			dec, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(zstdMaxStreamWindow))
			if err != nil {
				return nil, nil, err
			}
		}
		if err := dec.Reset(bytes.NewReader(src)); err != nil {
			zstdStreams.Put(dec)
			return nil, nil, err
		}
		return dec, func() { _ = dec.Reset(bytes.NewReader(nil)); zstdStreams.Put(dec) }, nil
	}
	return nil, nil, fmt.Errorf("%w: %d", ErrUnknownCompression, codec)
}

// zstdInto decodes src into dst with DecodeAll, which writes straight into
// dst (no window buffer of its own) and never past its capacity.
func zstdInto(src, dst []byte) (int, bool, error) {
	dec, _ := zstdBlobs.Get().(*zstd.Decoder)
	if dec == nil {
		var err error
		dec, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecodeAllCapLimit(true),
			zstd.WithDecoderMaxMemory(1<<40))
		if err != nil {
			return 0, false, err
		}
	}
	defer zstdBlobs.Put(dec)
	out, err := dec.DecodeAll(src, dst[:0:len(dst)])
	if err != nil {
		return 0, false, err
	}
	return len(out), false, nil
}

// zstdDeclaredSize sums the content sizes of src's frames, walking block
// headers from frame to frame without decoding. known is false when a frame
// does not declare its size.
func zstdDeclaredSize(src []byte, limit int) (int, bool, error) {
	total := uint64(0)
	for len(src) > 0 {
		var h zstd.Header
		if err := h.Decode(src); err != nil {
			return 0, false, err
		}
		if h.Skippable {
			n := uint64(h.HeaderSize) + uint64(h.SkippableSize)
			if n > uint64(len(src)) {
				return 0, false, errors.New("truncated skippable zstd frame")
			}
			src = src[n:]
			continue
		}
		if !h.HasFCS {
			return 0, false, nil
		}
		if total += h.FrameContentSize; total > uint64(limit) {
			return limit + 1, true, nil
		}
		n, err := zstdFrameLen(src[h.HeaderSize:], h.HasCheckSum)
		if err != nil {
			return 0, false, err
		}
		src = src[h.HeaderSize+n:]
	}
	return int(total), true, nil
}

// zstdFrameLen returns the length of a frame's blocks (and checksum) from
// their 3-byte headers: last-block bit, type, size.
func zstdFrameLen(b []byte, checksum bool) (int, error) {
	pos := 0
	for {
		if len(b)-pos < 3 {
			return 0, errors.New("truncated zstd block header")
		}
		bh := uint32(b[pos]) | uint32(b[pos+1])<<8 | uint32(b[pos+2])<<16
		pos += 3
		size := int(bh >> 3)
		switch (bh >> 1) & 3 {
		case 1: // RLE: one byte repeated size times
			size = 1
		case 3:
			return 0, errors.New("reserved zstd block type")
		}
		if size > len(b)-pos {
			return 0, errors.New("truncated zstd block")
		}
		pos += size
		if bh&1 == 1 {
			break
		}
	}
	if checksum {
		pos += 4
		if pos > len(b) {
			return 0, errors.New("truncated zstd checksum")
		}
	}
	return pos, nil
}

// snappySize returns the decoded size of a raw snappy block or of the
// xerial framing's chunks.
func snappySize(src []byte, limit int) (int, error) {
	if !bytes.HasPrefix(src, xerialMagic) {
		return s2.DecodedLen(src)
	}
	total := 0
	err := xerialChunks(src, func(chunk []byte) error {
		n, err := s2.DecodedLen(chunk)
		if err != nil {
			return err
		}
		if total += n; total > limit {
			return fmt.Errorf("%w: more than %d bytes", errTooLarge, limit)
		}
		return nil
	})
	return total, err
}

// xerialChunks calls fn with each raw snappy block of snappy-java's framing:
// magic, int32 version and minimum version, then int32 length + block.
func xerialChunks(src []byte, fn func([]byte) error) error {
	if len(src) < xerialHeaderSize {
		return errors.New("truncated xerial snappy header")
	}
	rest := src[xerialHeaderSize:]
	for len(rest) > 0 {
		if len(rest) < 4 {
			return errors.New("truncated xerial snappy chunk length")
		}
		n := binary.BigEndian.Uint32(rest)
		rest = rest[4:]
		if uint64(n) > uint64(len(rest)) {
			return fmt.Errorf("xerial snappy chunk of %d bytes with %d left", n, len(rest))
		}
		if err := fn(rest[:n]); err != nil {
			return err
		}
		rest = rest[n:]
	}
	return nil
}

// snappyInto decodes src, whose size snappySize gave, into dst.
func snappyInto(src, dst []byte) (int, bool, error) {
	if !bytes.HasPrefix(src, xerialMagic) {
		return snappyBlockInto(src, dst, 0)
	}
	n, more := 0, false
	err := xerialChunks(src, func(chunk []byte) error {
		m, over, err := snappyBlockInto(chunk, dst, n)
		n += m
		if over {
			more = true
			return errStopChunks
		}
		return err
	})
	if errors.Is(err, errStopChunks) {
		err = nil
	}
	return n, more, err
}

// errStopChunks ends a walk over xerial chunks early.
var errStopChunks = errors.New("stop")

func snappyBlockInto(src, dst []byte, at int) (int, bool, error) {
	n, err := s2.DecodedLen(src)
	if err != nil {
		return 0, false, err
	}
	if n > len(dst)-at {
		return 0, true, nil
	}
	out, err := s2.Decode(dst[at:at+n], src)
	if err != nil {
		return 0, false, err
	}
	if len(out) != n || (n > 0 && &out[0] != &dst[at]) {
		return 0, false, errors.New("snappy block decoded outside its buffer")
	}
	return n, false, nil
}
