package cli

import (
	"encoding/binary"
	"net"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// maxSniffedResponse bounds the response body kept to read a Produce
// response's error messages; a larger frame is skipped unread.
const maxSniffedResponse = 1 << 20

// produceMessages keeps the error messages of Produce responses. kgo fails
// a record with the partition's error code alone and drops the message the
// server sent with it ("compacted topic cannot accept a record without a
// key"), so the produce command reads its own connections' traffic: the
// requests' headers to know which correlation ids are Produce requests,
// and those responses in full. It only reads; a stream it cannot follow
// is left alone.
type produceMessages struct {
	// observe is told each partition's outcome in a response: nil, or
	// its error with the server's message.
	observe func(partition int32, err error)

	mu     sync.Mutex
	byCode map[int16]string // the last message the server gave with a code
}

func newProduceMessages(observe func(partition int32, err error)) *produceMessages {
	return &produceMessages{observe: observe, byCode: make(map[int16]string)}
}

// message is the server's last message for the error code, "" if none.
func (m *produceMessages) message(code int16) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.byCode[code]
}

// wrap returns conn with its traffic read by m.
func (m *produceMessages) wrap(conn net.Conn) net.Conn {
	return &sniffedConn{Conn: conn, m: m, produce: make(map[int32]int16),
		writes: frameReader{keep: 8}, reads: frameReader{keep: maxSniffedResponse}}
}

// sniffedConn is a connection whose frames are followed in both directions.
type sniffedConn struct {
	net.Conn
	m *produceMessages

	mu      sync.Mutex      // reads and writes run on different goroutines
	produce map[int32]int16 // correlation id -> version of Produce requests in flight
	writes  frameReader
	reads   frameReader
}

func (c *sniffedConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.writes.feed(p[:n], func(body []byte) {
		// Request header: api key, api version, correlation id.
		if len(body) < 8 || int16(binary.BigEndian.Uint16(body)) != 0 {
			return
		}
		c.mu.Lock()
		c.produce[int32(binary.BigEndian.Uint32(body[4:]))] = int16(binary.BigEndian.Uint16(body[2:]))
		c.mu.Unlock()
	})
	return n, err
}

func (c *sniffedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.reads.feed(p[:n], func(body []byte) {
		if len(body) < 4 {
			return
		}
		corr := int32(binary.BigEndian.Uint32(body))
		c.mu.Lock()
		version, ok := c.produce[corr]
		delete(c.produce, corr)
		c.mu.Unlock()
		if ok {
			c.m.readResponse(version, body[4:])
		}
	})
	return n, err
}

// readResponse keeps the error messages of one Produce response body (after
// the correlation id).
func (m *produceMessages) readResponse(version int16, body []byte) {
	resp := kmsg.NewProduceResponse()
	resp.Version = version
	if resp.IsFlexible() {
		var ok bool
		if body, ok = skipTags(body); !ok {
			return
		}
	}
	if resp.ReadFrom(body) != nil {
		return
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode == 0 {
				m.observe(p.Partition, nil)
				continue
			}
			msg := partitionMessage(&p)
			if msg != "" {
				m.mu.Lock()
				m.byCode[p.ErrorCode] = msg
				m.mu.Unlock()
			}
			m.observe(p.Partition, serverError(kerr.ErrorForCode(p.ErrorCode), msg))
		}
	}
}

// partitionMessage is the partition's error message, or else its first
// record error's.
func partitionMessage(p *kmsg.ProduceResponseTopicPartition) string {
	if p.ErrorMessage != nil && strings.TrimSpace(*p.ErrorMessage) != "" {
		return *p.ErrorMessage
	}
	for _, r := range p.ErrorRecords {
		if r.ErrorMessage != nil && strings.TrimSpace(*r.ErrorMessage) != "" {
			return *r.ErrorMessage
		}
	}
	return ""
}

// skipTags skips a flexible response header's tagged fields.
func skipTags(b []byte) ([]byte, bool) {
	n, size := binary.Uvarint(b)
	if size <= 0 {
		return nil, false
	}
	b = b[size:]
	for range n {
		if _, size = binary.Uvarint(b); size <= 0 {
			return nil, false
		}
		b = b[size:]
		l, size := binary.Uvarint(b)
		if size <= 0 || uint64(len(b)-size) < l {
			return nil, false
		}
		b = b[size+int(l):]
	}
	return b, true
}

// frameReader follows a stream of size-prefixed Kafka frames fed in
// arbitrary pieces and hands each frame's first keep bytes to a callback
// (a frame longer than keep is skipped when keep is the response limit).
type frameReader struct {
	keep   int
	size   [4]byte
	sizeN  int    // bytes of size read
	left   int    // bytes of the current frame still to come
	body   []byte // the kept bytes of the current frame
	broken bool   // the stream could not be followed
}

func (f *frameReader) feed(p []byte, frame func(body []byte)) {
	for len(p) > 0 && !f.broken {
		if f.sizeN < 4 {
			k := copy(f.size[f.sizeN:], p)
			f.sizeN += k
			p = p[k:]
			if f.sizeN < 4 {
				return
			}
			size := int32(binary.BigEndian.Uint32(f.size[:]))
			if size < 0 {
				f.broken = true
				return
			}
			f.left, f.body = int(size), f.body[:0]
		}
		k := min(f.left, len(p))
		if room := f.keep - len(f.body); room > 0 {
			f.body = append(f.body, p[:min(k, room)]...)
		}
		f.left -= k
		p = p[k:]
		if f.left == 0 {
			f.sizeN = 0
			if len(f.body) > 0 && (f.keep < maxSniffedResponse || len(f.body) < f.keep) {
				frame(f.body)
			}
		}
	}
}
