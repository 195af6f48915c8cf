package records

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// ErrInvalidRecord reports a record whose framing inside a batch is wrong
// (varints, lengths, header counts, record count). Kafka answers these with
// INVALID_RECORD.
var ErrInvalidRecord = errors.New("records: invalid record")

// RecordHeader is one record header. A nil Value is a null value.
type RecordHeader struct {
	Key   string
	Value []byte
}

// Record is one decoded record of a v2 batch. Key and Value are nil when
// null. Byte slices alias the batch (or its decompressed records) and must be
// copied by callers that keep them beyond the batch's life.
//
// Headers are checked but not decoded into a list: a record of a few
// compressed kilobytes may carry millions of them. EachHeader walks them,
// Headers lists them up to a cap and RawHeaders gives their encoding.
type Record struct {
	Attributes     int8
	TimestampDelta int64
	OffsetDelta    int32
	Key, Value     []byte
	HeaderCount    int32
	// headers is the header count varint and the headers as encoded;
	// nil means no header.
	headers []byte
}

// Offset is the record's absolute offset in a batch with header h.
func (r Record) Offset(h Header) int64 { return h.BaseOffset + int64(r.OffsetDelta) }

// Timestamp is the record's absolute timestamp in a batch with header h: for
// LogAppendTime batches every record carries the batch's max timestamp, as
// Kafka's readers report it.
func (r Record) Timestamp(h Header) int64 {
	if h.IsLogAppendTime() {
		return h.MaxTimestamp
	}
	return h.BaseTimestamp + r.TimestampDelta
}

// recordDecoder walks the records section of a batch. It allocates nothing:
// every field of a record aliases buf.
type recordDecoder struct {
	buf []byte
	pos int
}

func (d *recordDecoder) varint(what string) (int64, error) {
	v, n := binary.Varint(d.buf[d.pos:])
	if n <= 0 {
		return 0, fmt.Errorf("%w: bad varint for %s at byte %d", ErrInvalidRecord, what, d.pos)
	}
	d.pos += n
	return v, nil
}

func (d *recordDecoder) varint32(what string) (int32, error) {
	v, err := d.varint(what)
	if err != nil {
		return 0, err
	}
	if v < math.MinInt32 || v > math.MaxInt32 {
		return 0, fmt.Errorf("%w: %s %d out of int32 range", ErrInvalidRecord, what, v)
	}
	return int32(v), nil
}

// bytesField reads a varint length then that many bytes; -1 is null.
func (d *recordDecoder) bytesField(what string, end int) ([]byte, error) {
	v, k := binary.Varint(d.buf[d.pos:])
	if k <= 0 || v < math.MinInt32 || v > math.MaxInt32 {
		return nil, fmt.Errorf("%w: bad varint for %s length at byte %d", ErrInvalidRecord, what, d.pos)
	}
	d.pos += k
	n := int32(v)
	if n < 0 {
		if n != -1 {
			return nil, fmt.Errorf("%w: %s length %d", ErrInvalidRecord, what, n)
		}
		return nil, nil
	}
	if int(n) > end-d.pos {
		return nil, fmt.Errorf("%w: %s of %d bytes overruns the record", ErrInvalidRecord, what, n)
	}
	b := d.buf[d.pos : d.pos+int(n) : d.pos+int(n)]
	d.pos += int(n)
	return b, nil
}

// next decodes one record into r.
func (d *recordDecoder) next(r *Record) error {
	if d.pos >= len(d.buf) {
		return fmt.Errorf("%w: fewer records than the batch's record count", ErrInvalidRecord)
	}
	size, err := d.varint32("record length")
	if err != nil {
		return err
	}
	if size < 0 || int(size) > len(d.buf)-d.pos {
		return fmt.Errorf("%w: record length %d with %d bytes left", ErrInvalidRecord, size, len(d.buf)-d.pos)
	}
	end := d.pos + int(size)
	// Every field must end inside the record: decode within a view bounded at end.
	outer := d.buf
	d.buf = d.buf[:end]
	defer func() { d.buf = outer }()
	if d.pos >= end {
		return fmt.Errorf("%w: empty record", ErrInvalidRecord)
	}
	r.Attributes = int8(d.buf[d.pos])
	d.pos++
	if r.TimestampDelta, err = d.varint("timestamp delta"); err != nil {
		return err
	}
	if r.OffsetDelta, err = d.varint32("offset delta"); err != nil {
		return err
	}
	if r.Key, err = d.bytesField("key", end); err != nil {
		return err
	}
	if r.Value, err = d.bytesField("value", end); err != nil {
		return err
	}
	if err := d.headers(r, end); err != nil {
		return err
	}
	if d.pos != end {
		return fmt.Errorf("%w: record declares %d bytes but its fields use %d", ErrInvalidRecord, size, int(size)-(end-d.pos))
	}
	return nil
}

// minHeaderSize is the smallest encoded header: an empty key's length and
// a null value's, one byte each.
const minHeaderSize = 2

// headers checks the record's headers (count, then each key and value
// within the record) without keeping them: r gets the count and the
// encoded section. The count is checked against the bytes left before the
// walk, so a claimed count the record cannot hold costs nothing.
func (d *recordDecoder) headers(r *Record, end int) error {
	start := d.pos
	count, err := d.varint32("header count")
	if err != nil {
		return err
	}
	if count < 0 {
		return fmt.Errorf("%w: header count %d", ErrInvalidRecord, count)
	}
	if int64(count)*minHeaderSize > int64(end-d.pos) {
		return fmt.Errorf("%w: header count %d cannot fit in the %d bytes left of the record", ErrInvalidRecord, count, end-d.pos)
	}
	for i := int32(0); i < count; i++ {
		k, err := d.bytesField("header key", end)
		if err != nil {
			return err
		}
		if k == nil {
			return fmt.Errorf("%w: null header key", ErrInvalidRecord)
		}
		if _, err := d.bytesField("header value", end); err != nil {
			return err
		}
	}
	r.HeaderCount = count
	r.headers = nil
	if count > 0 {
		r.headers = d.buf[start:d.pos:d.pos]
	}
	return nil
}

// minRecordSize is the smallest encoded record: one byte each for the
// length, attributes, timestamp delta, offset delta, key length, value
// length and header count.
const minRecordSize = 7

// walkRecords decodes exactly count records from data, calling fn for each.
// The count is checked against the bytes before the walk; trailing bytes
// after the last record are an error, as in Kafka.
func walkRecords(data []byte, count int32, fn func(i int32, r *Record) error) error {
	if count < 0 {
		return fmt.Errorf("%w: negative record count %d", ErrInvalidRecord, count)
	}
	if int64(count)*minRecordSize > int64(len(data)) {
		return fmt.Errorf("%w: %d records cannot fit in %d bytes", ErrInvalidRecord, count, len(data))
	}
	d := recordDecoder{buf: data}
	var r Record
	for i := int32(0); i < count; i++ {
		if err := d.next(&r); err != nil {
			return fmt.Errorf("record %d: %w", i, err)
		}
		if err := fn(i, &r); err != nil {
			return err
		}
	}
	if d.pos != len(data) {
		return fmt.Errorf("%w: %d bytes remain after %d records", ErrInvalidRecord, len(data)-d.pos, count)
	}
	return nil
}

// walkPrefix decodes the records lying wholly inside prefix, the start of
// records that go on past it (not decoded yet), calling fn for each, and
// stops at the first record running past prefix. It returns the bytes the
// records need at least: where that record says it ends. An error is one
// walkRecords meets on the whole records (a record inside prefix decodes the
// same from either), or a count of records all inside prefix, which leaves
// the bytes after them over. It lets records too large for a first buffer
// be refused on their first bytes instead of decoded in full.
func walkPrefix(prefix []byte, count int32, fn func(i int32, r *Record) error) (int64, error) {
	d := recordDecoder{buf: prefix}
	var r Record
	for i := int32(0); i < count; i++ {
		if d.pos >= len(prefix) {
			return int64(len(prefix)) + 1, nil
		}
		size, n := binary.Varint(prefix[d.pos:])
		if n == 0 {
			return int64(len(prefix)) + 1, nil
		}
		if n > 0 && size >= 0 && size <= math.MaxInt32 && int64(d.pos+n)+size > int64(len(prefix)) {
			return int64(d.pos+n) + size, nil
		}
		if err := d.next(&r); err != nil {
			return 0, fmt.Errorf("record %d: %w", i, err)
		}
		if err := fn(i, &r); err != nil {
			return 0, err
		}
	}
	return 0, fmt.Errorf("%w: bytes remain after %d records", ErrInvalidRecord, count)
}

// appendVarint appends v zig-zag encoded.
func appendVarint(dst []byte, v int64) []byte { return binary.AppendVarint(dst, v) }

// appendRecord encodes one record (body length first) onto dst.
func appendRecord(dst []byte, attrs int8, tsDelta int64, offDelta int32, key, value []byte, headers []RecordHeader) []byte {
	body := varintLen(tsDelta) + varintLen(int64(offDelta)) + 1 +
		bytesFieldLen(key) + bytesFieldLen(value) + varintLen(int64(len(headers)))
	for _, h := range headers {
		body += varintLen(int64(len(h.Key))) + len(h.Key) + bytesFieldLen(h.Value)
	}
	dst = appendVarint(dst, int64(body))
	dst = append(dst, byte(attrs))
	dst = appendVarint(dst, tsDelta)
	dst = appendVarint(dst, int64(offDelta))
	dst = appendBytesField(dst, key)
	dst = appendBytesField(dst, value)
	dst = appendVarint(dst, int64(len(headers)))
	for _, h := range headers {
		dst = appendVarint(dst, int64(len(h.Key)))
		dst = append(dst, h.Key...)
		dst = appendBytesField(dst, h.Value)
	}
	return dst
}

func appendBytesField(dst, b []byte) []byte {
	if b == nil {
		return appendVarint(dst, -1)
	}
	dst = appendVarint(dst, int64(len(b)))
	return append(dst, b...)
}

func bytesFieldLen(b []byte) int {
	if b == nil {
		return 1
	}
	return varintLen(int64(len(b))) + len(b)
}

func varintLen(v int64) int {
	var tmp [binary.MaxVarintLen64]byte
	return binary.PutVarint(tmp[:], v)
}
