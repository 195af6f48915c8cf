package share

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kbin"

	"github.com/sluice-io/sluice/internal/kafka"
)

// Record types: the int16 that starts a key (Kafka writes a coordinator
// key's api key there, then the key at version 0).
const (
	RecordTypeSnapshot int16 = 0 // ShareSnapshotKey/ShareSnapshotValue
	RecordTypeUpdate   int16 = 1 // ShareUpdateKey/ShareUpdateValue
)

// valueVersion is the only version of both values.
const valueVersion int16 = 0

// noDeliveryCompleteCount is DeliveryCompleteCount's default (KIP-1226):
// unknown. A tagged field holding it is not written.
const noDeliveryCompleteCount int32 = -1

// StateBatch is a range of offsets sharing a delivery state and count.
type StateBatch struct {
	FirstOffset, LastOffset int64
	// DeliveryState is 0 available, 2 acknowledged, 4 archived.
	DeliveryState int8
	DeliveryCount int16
}

// SnapshotValue is a ShareSnapshotValue: a share partition's whole state.
type SnapshotValue struct {
	SnapshotEpoch, StateEpoch, LeaderEpoch int32
	StartOffset                            int64
	DeliveryCompleteCount                  int32
	CreateTimestamp, WriteTimestamp        int64
	StateBatches                           []StateBatch
}

// UpdateValue is a ShareUpdateValue: what one write changed.
type UpdateValue struct {
	SnapshotEpoch, LeaderEpoch int32
	// StartOffset is -1 when the write did not move it.
	StartOffset           int64
	DeliveryCompleteCount int32
	StateBatches          []StateBatch
}

// AppendKey appends the key of a record of recordType for k.
func AppendKey(dst []byte, recordType int16, k Key) []byte {
	dst = kbin.AppendInt16(dst, recordType)
	dst = kbin.AppendString(dst, k.GroupID)
	dst = kbin.AppendUuid(dst, k.TopicID)
	return kbin.AppendInt32(dst, k.Partition)
}

// DecodeKey reads a key. An unknown record type is returned with no error
// and a zero Key: Kafka's loader skips such records.
func DecodeKey(b []byte) (int16, Key, error) {
	d := decoder{r: kbin.Reader{Src: b}}
	typ := d.r.Int16()
	if !d.r.Ok() {
		return 0, Key{}, errors.New("share state key: truncated record type")
	}
	if typ != RecordTypeSnapshot && typ != RecordTypeUpdate {
		return typ, Key{}, nil
	}
	var k Key
	k.GroupID = d.string16()
	k.TopicID = kafka.UUID(d.r.Uuid())
	k.Partition = d.r.Int32()
	if err := d.finish(); err != nil {
		return typ, Key{}, fmt.Errorf("share state key of type %d: %w", typ, err)
	}
	return typ, k, nil
}

// AppendTo appends the value, version first.
func (v *SnapshotValue) AppendTo(dst []byte) []byte {
	dst = kbin.AppendInt16(dst, valueVersion)
	dst = kbin.AppendInt32(dst, v.SnapshotEpoch)
	dst = kbin.AppendInt32(dst, v.StateEpoch)
	dst = kbin.AppendInt32(dst, v.LeaderEpoch)
	dst = kbin.AppendInt64(dst, v.StartOffset)
	dst = kbin.AppendInt64(dst, v.CreateTimestamp)
	dst = kbin.AppendInt64(dst, v.WriteTimestamp)
	dst = appendBatches(dst, v.StateBatches)
	return appendCountTag(dst, v.DeliveryCompleteCount)
}

// DecodeSnapshotValue reads a ShareSnapshotValue.
func DecodeSnapshotValue(b []byte) (SnapshotValue, error) {
	d := decoder{r: kbin.Reader{Src: b}}
	d.version()
	var v SnapshotValue
	v.SnapshotEpoch, v.StateEpoch, v.LeaderEpoch = d.r.Int32(), d.r.Int32(), d.r.Int32()
	v.StartOffset = d.r.Int64()
	v.CreateTimestamp, v.WriteTimestamp = d.r.Int64(), d.r.Int64()
	v.StateBatches = d.batches()
	v.DeliveryCompleteCount = d.countTag()
	if err := d.finish(); err != nil {
		return SnapshotValue{}, fmt.Errorf("ShareSnapshotValue: %w", err)
	}
	return v, nil
}

// AppendTo appends the value, version first.
func (v *UpdateValue) AppendTo(dst []byte) []byte {
	dst = kbin.AppendInt16(dst, valueVersion)
	dst = kbin.AppendInt32(dst, v.SnapshotEpoch)
	dst = kbin.AppendInt32(dst, v.LeaderEpoch)
	dst = kbin.AppendInt64(dst, v.StartOffset)
	dst = appendBatches(dst, v.StateBatches)
	return appendCountTag(dst, v.DeliveryCompleteCount)
}

// DecodeUpdateValue reads a ShareUpdateValue.
func DecodeUpdateValue(b []byte) (UpdateValue, error) {
	d := decoder{r: kbin.Reader{Src: b}}
	d.version()
	var v UpdateValue
	v.SnapshotEpoch, v.LeaderEpoch = d.r.Int32(), d.r.Int32()
	v.StartOffset = d.r.Int64()
	v.StateBatches = d.batches()
	v.DeliveryCompleteCount = d.countTag()
	if err := d.finish(); err != nil {
		return UpdateValue{}, fmt.Errorf("ShareUpdateValue: %w", err)
	}
	return v, nil
}

func appendBatches(dst []byte, bs []StateBatch) []byte {
	dst = kbin.AppendCompactArrayLen(dst, len(bs))
	for _, b := range bs {
		dst = kbin.AppendInt64(dst, b.FirstOffset)
		dst = kbin.AppendInt64(dst, b.LastOffset)
		dst = kbin.AppendInt8(dst, b.DeliveryState)
		dst = kbin.AppendInt16(dst, b.DeliveryCount)
		dst = kbin.AppendUvarint(dst, 0) // no tagged fields
	}
	return dst
}

// appendCountTag writes the value's tagged fields: DeliveryCompleteCount
// (tag 0) unless it holds its default.
func appendCountTag(dst []byte, count int32) []byte {
	if count == noDeliveryCompleteCount {
		return kbin.AppendUvarint(dst, 0)
	}
	dst = kbin.AppendUvarint(dst, 1)
	dst = kbin.AppendUvarint(dst, 0) // tag
	dst = kbin.AppendUvarint(dst, 4) // size
	return kbin.AppendInt32(dst, count)
}

// decoder keeps the first error of a decoding that reads straight through.
type decoder struct {
	r   kbin.Reader
	err error
}

func (d *decoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
	d.r.Src = nil
}

func (d *decoder) finish() error {
	switch {
	case d.err != nil:
		return d.err
	case !d.r.Ok():
		return errors.New("truncated input")
	case len(d.r.Src) > 0:
		return fmt.Errorf("%d trailing bytes", len(d.r.Src))
	}
	return nil
}

func (d *decoder) version() {
	if v := d.r.Int16(); d.r.Ok() && v != valueVersion {
		d.fail(fmt.Errorf("unknown value version %d", v))
	}
}

func (d *decoder) string16() string {
	n := d.r.Int16()
	if n < 0 && d.r.Ok() {
		d.fail(errors.New("null group id"))
		return ""
	}
	return string(d.r.Span(int(n)))
}

// batchSize is a state batch's smallest encoding: 8+8+1+2 and its tag count.
const batchSize = 20

func (d *decoder) batches() []StateBatch {
	n := int(d.r.Uvarint()) - 1
	switch {
	case !d.r.Ok() || d.err != nil:
		return nil
	case n < 0:
		d.fail(errors.New("null state batches"))
		return nil
	case n > len(d.r.Src)/batchSize:
		d.fail(fmt.Errorf("%d state batches in %d bytes", n, len(d.r.Src)))
		return nil
	}
	out := make([]StateBatch, n)
	for i := range out {
		out[i] = StateBatch{FirstOffset: d.r.Int64(), LastOffset: d.r.Int64(), DeliveryState: d.r.Int8(), DeliveryCount: d.r.Int16()}
		d.skipTags()
	}
	return out
}

// countTag reads the value's tagged fields, keeping DeliveryCompleteCount
// and skipping the tags it does not know, as Kafka's readers do.
func (d *decoder) countTag() int32 {
	count := noDeliveryCompleteCount
	n := d.r.Uvarint()
	for i := uint32(0); i < n && d.r.Ok() && d.err == nil; i++ {
		tag, size := d.r.Uvarint(), int(d.r.Uvarint())
		field := d.r.Span(size)
		if !d.r.Ok() {
			return count
		}
		if tag == 0 {
			if size != 4 {
				d.fail(fmt.Errorf("DeliveryCompleteCount of %d bytes", size))
				return count
			}
			r := kbin.Reader{Src: field}
			count = r.Int32()
		}
	}
	return count
}

func (d *decoder) skipTags() {
	n := d.r.Uvarint()
	for i := uint32(0); i < n && d.r.Ok(); i++ {
		d.r.Uvarint()
		d.r.Span(int(d.r.Uvarint()))
	}
}
