package records

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrTooManyHeaders reports a record with more headers than a caller of
// Record.Headers allows.
var ErrTooManyHeaders = errors.New("records: too many record headers")

// EachHeader calls fn with each header's key and value in order (a nil value
// is null), aliasing the record's bytes; nothing is allocated. An error from
// fn stops the walk and is returned.
func (r Record) EachHeader(fn func(key, value []byte) error) error {
	if r.headers == nil {
		return nil
	}
	// The headers were checked when the record was decoded; decode them again
	// with the same bounds, so a hand-made Record cannot read out of range.
	d := recordDecoder{buf: r.headers}
	count, err := d.varint32("header count")
	if err != nil {
		return err
	}
	for i := int32(0); i < count; i++ {
		k, err := d.bytesField("header key", len(d.buf))
		if err != nil {
			return err
		}
		v, err := d.bytesField("header value", len(d.buf))
		if err != nil {
			return err
		}
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return nil
}

// Headers returns the record's headers as a list, or ErrTooManyHeaders when
// it has more than max: a caller that needs a list says how long a list it
// can hold. Values alias the record's bytes; keys are copied.
func (r Record) Headers(max int) ([]RecordHeader, error) {
	if int(r.HeaderCount) > max {
		return nil, fmt.Errorf("%w: %d, at most %d wanted", ErrTooManyHeaders, r.HeaderCount, max)
	}
	if r.HeaderCount == 0 {
		return nil, nil
	}
	out := make([]RecordHeader, 0, r.HeaderCount)
	err := r.EachHeader(func(k, v []byte) error {
		out = append(out, RecordHeader{Key: string(k), Value: v})
		return nil
	})
	return out, err
}

// RawHeaders returns the header count and the headers exactly as encoded in
// the record, for a writer that copies a record without decoding its headers
// (the cleaner rewriting a batch).
func (r Record) RawHeaders() []byte {
	if r.headers == nil {
		return binary.AppendVarint(nil, 0)
	}
	return r.headers
}
