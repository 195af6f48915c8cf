// Package fetchwire encodes Fetch responses (versions 4 to 18) whose record
// bytes stay in segment files: the encoder lays the response out as a list
// of in-memory byte chunks and file slices, and the writer streams the
// slices with sendfile(2) when the destination is a plaintext TCP socket and
// the file is an operating-system file, copying them otherwise. kmsg cannot
// do this, as it encodes from bytes in memory; tests decode our output with
// kmsg to prove the two agree.
package fetchwire

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/vfs"
)

// MinVersion and MaxVersion bound the Fetch versions encoded here: 4 is
// Kafka 4's floor (KIP-896), 18 is Kafka 4.4's maximum.
const (
	MinVersion int16 = 4
	MaxVersion int16 = 18
)

// Slice is a byte range of a file, as the commit log's reads return them.
type Slice struct {
	File vfs.File
	Pos  int64
	Size int64
}

// AbortedTransaction is an entry of a partition's aborted transaction list.
type AbortedTransaction struct {
	ProducerID  int64
	FirstOffset int64
}

// EpochEndOffset is the diverging epoch a follower must truncate to (v12+).
type EpochEndOffset struct {
	Epoch     int32
	EndOffset int64
}

// LeaderIDAndEpoch is the current leader, sent with NOT_LEADER errors (v12+).
type LeaderIDAndEpoch struct {
	LeaderID    int32
	LeaderEpoch int32
}

// SnapshotID names the snapshot a fetcher must load instead (v12+).
type SnapshotID struct {
	EndOffset int64
	Epoch     int32
}

// NodeEndpoint describes a leader named in CurrentLeader (v16+).
type NodeEndpoint struct {
	NodeID int32
	Host   string
	Port   int32
	Rack   *string
}

// Partition is one partition's answer.
type Partition struct {
	Partition        int32
	ErrorCode        int16
	HighWatermark    int64
	LastStableOffset int64
	LogStartOffset   int64
	// AbortedTransactions nil is encoded as null, as Kafka does for
	// read_uncommitted fetches; empty and non-nil is an empty list.
	AbortedTransactions []AbortedTransaction
	// PreferredReadReplica is -1 when the client should keep this broker (v11+).
	PreferredReadReplica int32
	// The tagged fields (v12+) are sent only when set.
	DivergingEpoch *EpochEndOffset
	CurrentLeader  *LeaderIDAndEpoch
	SnapshotID     *SnapshotID
	// Records are the record batch bytes, in order; none sends an empty set.
	Records []Slice
}

// Topic is one topic's answer; Name is used up to v12, ID from v13.
type Topic struct {
	Name       string
	ID         kafka.UUID
	Partitions []Partition
}

// Response is a Fetch response body.
type Response struct {
	ThrottleMillis int32
	ErrorCode      int16
	SessionID      int32
	Topics         []Topic
	// NodeEndpoints (v16+) describe the leaders named in CurrentLeader.
	NodeEndpoints []NodeEndpoint
}

// chunk is one piece of the encoded body: bytes of the layout buffer, or a
// file slice.
type chunk struct {
	start, end int // into Encoded.buf, when slice.File is nil
	slice      Slice
}

// Encoded is a response laid out for writing. It holds the files of its
// slices open only as long as the caller keeps them open.
type Encoded struct {
	buf    []byte
	chunks []chunk
	size   int64
	// errs are the response's error codes and counts (errors.go).
	errs   []ErrorCount
	errBuf [2]ErrorCount
}

// Len is the body's size in bytes.
func (e *Encoded) Len() int64 { return e.size }

// encoder appends the layout; records cut the buffer into chunks.
type encoder struct {
	e        *Encoded
	flexible bool
	version  int16
	cut      int // start of the byte chunk being built
}

// Encode lays out r at the given version. It fails on a version outside
// MinVersion..MaxVersion, a negative or oversized slice, or a field the
// version cannot carry.
func Encode(r *Response, version int16) (*Encoded, error) {
	if version < MinVersion || version > MaxVersion {
		return nil, fmt.Errorf("fetch response version %d outside %d..%d", version, MinVersion, MaxVersion)
	}
	enc := &encoder{e: &Encoded{}, flexible: version >= 12, version: version}
	if err := enc.response(r); err != nil {
		return nil, err
	}
	enc.flush()
	enc.e.tallyErrors(r)
	return enc.e, nil
}

func (enc *encoder) response(r *Response) error {
	enc.int32(r.ThrottleMillis) // v1+
	if enc.version >= 7 {
		enc.int16(r.ErrorCode)
		enc.int32(r.SessionID)
	}
	enc.arrayLen(len(r.Topics))
	for i := range r.Topics {
		t := &r.Topics[i]
		if enc.version >= 13 {
			enc.e.buf = append(enc.e.buf, t.ID[:]...)
		} else {
			enc.string(t.Name)
		}
		enc.arrayLen(len(t.Partitions))
		for j := range t.Partitions {
			if err := enc.partition(&t.Partitions[j]); err != nil {
				return fmt.Errorf("topic %q partition %d: %w", t.Name, t.Partitions[j].Partition, err)
			}
		}
		enc.noTags()
	}
	if !enc.flexible {
		if len(r.NodeEndpoints) > 0 {
			return fmt.Errorf("node endpoints need version 16, not %d", enc.version)
		}
		return nil
	}
	if len(r.NodeEndpoints) == 0 {
		enc.noTags()
		return nil
	}
	if enc.version < 16 {
		return fmt.Errorf("node endpoints need version 16, not %d", enc.version)
	}
	enc.uvarint(1)
	enc.uvarint(0)
	enc.sized(func() {
		enc.arrayLen(len(r.NodeEndpoints))
		for _, n := range r.NodeEndpoints {
			enc.int32(n.NodeID)
			enc.string(n.Host)
			enc.int32(n.Port)
			enc.nullableString(n.Rack)
			enc.noTags()
		}
	})
	return nil
}

func (enc *encoder) partition(p *Partition) error {
	enc.int32(p.Partition)
	enc.int16(p.ErrorCode)
	enc.int64(p.HighWatermark)
	enc.int64(p.LastStableOffset) // v4+
	if enc.version >= 5 {
		enc.int64(p.LogStartOffset)
	}
	if p.AbortedTransactions == nil {
		enc.nullArrayLen()
	} else {
		enc.arrayLen(len(p.AbortedTransactions))
		for _, a := range p.AbortedTransactions {
			enc.int64(a.ProducerID)
			enc.int64(a.FirstOffset)
			enc.noTags()
		}
	}
	if enc.version >= 11 {
		enc.int32(p.PreferredReadReplica)
	}
	if err := enc.records(p.Records); err != nil {
		return err
	}
	if !enc.flexible {
		if p.DivergingEpoch != nil || p.CurrentLeader != nil || p.SnapshotID != nil {
			return fmt.Errorf("tagged fields need version 12, not %d", enc.version)
		}
		return nil
	}
	tags := 0
	for _, set := range []bool{p.DivergingEpoch != nil, p.CurrentLeader != nil, p.SnapshotID != nil} {
		if set {
			tags++
		}
	}
	enc.uvarint(uint64(tags))
	if d := p.DivergingEpoch; d != nil {
		enc.uvarint(0)
		enc.sized(func() { enc.int32(d.Epoch); enc.int64(d.EndOffset); enc.noTags() })
	}
	if l := p.CurrentLeader; l != nil {
		enc.uvarint(1)
		enc.sized(func() { enc.int32(l.LeaderID); enc.int32(l.LeaderEpoch); enc.noTags() })
	}
	if s := p.SnapshotID; s != nil {
		enc.uvarint(2)
		enc.sized(func() { enc.int64(s.EndOffset); enc.int32(s.Epoch); enc.noTags() })
	}
	return nil
}

// records writes the records length and then the slices as file chunks.
func (enc *encoder) records(slices []Slice) error {
	var total int64
	for _, s := range slices {
		if s.File == nil || s.Pos < 0 || s.Size < 0 {
			return fmt.Errorf("bad record slice (pos %d, size %d)", s.Pos, s.Size)
		}
		total += s.Size
	}
	if total > math.MaxInt32-1 {
		return fmt.Errorf("records of %d bytes exceed the protocol's limit", total)
	}
	if enc.flexible {
		enc.uvarint(uint64(total) + 1)
	} else {
		enc.int32(int32(total))
	}
	for _, s := range slices {
		if s.Size == 0 {
			continue
		}
		enc.flush()
		enc.e.chunks = append(enc.e.chunks, chunk{slice: s})
		enc.e.size += s.Size
	}
	return nil
}

// flush closes the byte chunk being built.
func (enc *encoder) flush() {
	if end := len(enc.e.buf); end > enc.cut {
		enc.e.chunks = append(enc.e.chunks, chunk{start: enc.cut, end: end})
		enc.e.size += int64(end - enc.cut)
		enc.cut = end
	}
}

// sized writes fn's bytes prefixed by their length as an unsigned varint,
// as tagged field values are. Tagged values hold no records, so fn's bytes
// stay in the current chunk and can be moved.
func (enc *encoder) sized(fn func()) {
	at := len(enc.e.buf)
	fn()
	body := append([]byte(nil), enc.e.buf[at:]...)
	enc.e.buf = binary.AppendUvarint(enc.e.buf[:at], uint64(len(body)))
	enc.e.buf = append(enc.e.buf, body...)
}

func (enc *encoder) int16(v int16) { enc.e.buf = binary.BigEndian.AppendUint16(enc.e.buf, uint16(v)) }
func (enc *encoder) int32(v int32) { enc.e.buf = binary.BigEndian.AppendUint32(enc.e.buf, uint32(v)) }
func (enc *encoder) int64(v int64) { enc.e.buf = binary.BigEndian.AppendUint64(enc.e.buf, uint64(v)) }
func (enc *encoder) uvarint(v uint64) {
	enc.e.buf = binary.AppendUvarint(enc.e.buf, v)
}

func (enc *encoder) noTags() {
	if enc.flexible {
		enc.uvarint(0)
	}
}

func (enc *encoder) arrayLen(n int) {
	if enc.flexible {
		enc.uvarint(uint64(n) + 1)
	} else {
		enc.int32(int32(n))
	}
}

func (enc *encoder) nullArrayLen() {
	if enc.flexible {
		enc.uvarint(0)
	} else {
		enc.int32(-1)
	}
}

func (enc *encoder) string(s string) {
	if enc.flexible {
		enc.uvarint(uint64(len(s)) + 1)
	} else {
		enc.int16(int16(len(s)))
	}
	enc.e.buf = append(enc.e.buf, s...)
}

func (enc *encoder) nullableString(s *string) {
	if s != nil {
		enc.string(*s)
		return
	}
	if enc.flexible {
		enc.uvarint(0)
	} else {
		enc.int16(-1)
	}
}
