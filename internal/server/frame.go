package server

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/sluice-io/sluice/internal/protocol"
)

// readFrame reads one size-prefixed request frame from r into fb, whose
// buffer grows as the frame's bytes arrive (firstChunk bytes once the first
// byte is there, then four times as much each time it is full), charged to
// m's budget: a size prefix alone allocates nothing, and a frame holds at
// most four times the bytes that arrived (or firstChunk), never more than
// its size's class. A frame that fits in its first chunk never waits for
// the budget (it is still counted): small requests (metadata, heartbeats,
// offset commits, small produces) keep flowing while large ones wait, where
// Kafka's depleted pool mutes every channel; what they take past the budget
// is at most firstChunk per connection. limit is socket.request.max.bytes;
// ctx and deadline bound waits for the budget.
func (m *requestMemory) readFrame(ctx context.Context, r *bufio.Reader, limit int32, deadline time.Time, fb *frameBuf) error {
	var sizeBuf [4]byte
	if _, err := io.ReadFull(r, sizeBuf[:]); err != nil {
		return err
	}
	size := int(int32(binary.BigEndian.Uint32(sizeBuf[:])))
	if size < 0 {
		return protocol.ErrNegativeFrameSize
	}
	if size > int(limit) {
		return &protocol.FrameTooLargeError{Size: int32(size), Limit: limit}
	}
	fb.b = fb.b[:0]
	for len(fb.b) < size {
		if len(fb.b) == cap(fb.b) {
			// Wait for a byte before allocating for it.
			if _, err := r.Peek(1); err != nil {
				return frameReadError(size, err)
			}
			if err := m.grow(ctx, fb, nextChunk(cap(fb.b), size), size <= firstChunk, deadline); err != nil {
				return err
			}
		}
		end := min(cap(fb.b), size)
		n, err := r.Read(fb.b[len(fb.b):end])
		fb.b = fb.b[:len(fb.b)+n]
		if err != nil && len(fb.b) < size {
			return frameReadError(size, err)
		}
	}
	return nil
}

// nextChunk is the buffer size once have bytes are filled: firstChunk, then
// four times as much, never past the frame's size. Growing fourfold copies
// a frame's bytes a third of a time over on average (doubling: once), for
// buffers at most four times what arrived.
func nextChunk(have, size int) int {
	if have == 0 {
		return min(size, firstChunk)
	}
	return min(size, 4*have)
}

func frameReadError(size int, err error) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("reading %d-byte frame: %w", size, err)
}
