package protocol

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxRequestSize is Kafka's socket.request.max.bytes default (100 MiB).
const DefaultMaxRequestSize = 104857600

// FrameTooLargeError reports a frame whose declared size exceeds the limit.
// Kafka closes the connection on it (InvalidReceiveException), so does Sluice.
type FrameTooLargeError struct {
	Size  int32
	Limit int32
}

func (e *FrameTooLargeError) Error() string {
	return fmt.Sprintf("frame of %d bytes exceeds socket.request.max.bytes %d", e.Size, e.Limit)
}

// ErrNegativeFrameSize reports a frame whose size prefix is negative.
var ErrNegativeFrameSize = errors.New("negative frame size")

// ReadFrame reads one size-prefixed frame from r and returns its payload.
// It checks the declared size against limit before allocating, so a hostile
// prefix costs no memory. buf is reused when it is large enough.
// A clean end of stream before the first byte returns io.EOF.
func ReadFrame(r io.Reader, limit int32, buf []byte) ([]byte, error) {
	var sizeBuf [4]byte
	if _, err := io.ReadFull(r, sizeBuf[:]); err != nil {
		return nil, err
	}
	size := int32(binary.BigEndian.Uint32(sizeBuf[:]))
	if size < 0 {
		return nil, ErrNegativeFrameSize
	}
	if size > limit {
		return nil, &FrameTooLargeError{Size: size, Limit: limit}
	}
	if cap(buf) < int(size) {
		buf = make([]byte, size)
	}
	buf = buf[:size]
	if _, err := io.ReadFull(r, buf); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("reading %d-byte frame: %w", size, err)
	}
	return buf, nil
}

// PutFrameSize writes size as a big-endian int32 into dst[at:at+4]; callers
// reserve the four bytes first and fill them once the frame is encoded.
func PutFrameSize(dst []byte, at int, size int) {
	binary.BigEndian.PutUint32(dst[at:at+4], uint32(size))
}
