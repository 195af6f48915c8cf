package consumerrec

import (
	"errors"
	"fmt"
	"math"

	"github.com/twmb/franz-go/pkg/kbin"

	"github.com/sluice-io/sluice/internal/kafka"
)

// errTruncated is what a decoder reports when the input ends inside a field.
var errTruncated = errors.New("truncated input")

// decoder reads Kafka's primitives through kbin.Reader and keeps the first
// error, so that a struct's decoding reads straight through and checks once.
type decoder struct {
	r   kbin.Reader
	err error
}

func newDecoder(b []byte) *decoder { return &decoder{r: kbin.Reader{Src: b}} }

func (d *decoder) ok() bool { return d.err == nil && d.r.Ok() }

func (d *decoder) failf(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf(format, args...)
	}
	d.r.Src = nil // nothing more is read once failed
}

// finish reports the first error, or trailing bytes after the last field.
func (d *decoder) finish() error {
	if d.err != nil {
		return d.err
	}
	if !d.r.Ok() {
		return errTruncated
	}
	if n := len(d.r.Src); n > 0 {
		return fmt.Errorf("%d trailing bytes", n)
	}
	return nil
}

func (d *decoder) int8() int8   { return d.r.Int8() }
func (d *decoder) int16() int16 { return d.r.Int16() }
func (d *decoder) int32() int32 { return d.r.Int32() }
func (d *decoder) int64() int64 { return d.r.Int64() }

func (d *decoder) uuid() kafka.UUID { return kafka.UUID(d.r.Uuid()) }

// uvarint reads Kafka's unsigned varint; as in Kafka, a value that does not
// fit an int32 reads negative (which length readers treat as null).
func (d *decoder) uvarint() int32 { return int32(d.r.Uvarint()) }

// string16 reads a non-flexible string (int16 length, never null).
func (d *decoder) string16(field string) string {
	n := d.r.Int16()
	if n < 0 && d.r.Ok() {
		d.failf("%s: null in a non-nullable string", field)
		return ""
	}
	return string(d.r.Span(int(n)))
}

// compactLen reads a compact length (stored as length+1, 0 for null) and
// bounds it the way Kafka bounds strings, by int16.
func (d *decoder) compactLen(field string) (n int, null bool) {
	n = int(d.uvarint()) - 1
	switch {
	case !d.ok():
		return 0, false
	case n < 0:
		return 0, true
	case n > math.MaxInt16:
		d.failf("%s: string length %d above %d", field, n, math.MaxInt16)
		return 0, false
	}
	return n, false
}

func (d *decoder) compactString(field string) string {
	n, null := d.compactLen(field)
	if null {
		d.failf("%s: null in a non-nullable string", field)
		return ""
	}
	return string(d.r.Span(n))
}

func (d *decoder) compactNullableString(field string) *string {
	n, null := d.compactLen(field)
	if null || !d.ok() {
		return nil
	}
	s := string(d.r.Span(n))
	return &s
}

// compactBytes reads non-nullable bytes into a copy, so a decoded value
// never aliases the caller's buffer.
func (d *decoder) compactBytes(field string) []byte {
	n := int(d.uvarint()) - 1
	if !d.ok() {
		return nil
	}
	if n < 0 {
		d.failf("%s: null in non-nullable bytes", field)
		return nil
	}
	span := d.r.Span(n)
	if !d.ok() {
		return nil
	}
	out := make([]byte, n)
	copy(out, span)
	return out
}

// arrayLen reads a compact array length. Each element takes at least
// minSize bytes, so a length the remaining input cannot hold is refused
// before anything is allocated for it.
func (d *decoder) arrayLen(field string, minSize int, nullable bool) (n int, null bool) {
	n = int(d.uvarint()) - 1
	switch {
	case !d.ok():
		return 0, false
	case n < 0 && nullable:
		return 0, true
	case n < 0:
		d.failf("%s: null in a non-nullable array", field)
		return 0, false
	case n > len(d.r.Src)/minSize:
		d.failf("%s: %d elements in %d bytes", field, n, len(d.r.Src))
		return 0, false
	}
	return n, false
}

func (d *decoder) int32s(field string) []int32 {
	n, _ := d.arrayLen(field, 4, false)
	if !d.ok() {
		return nil
	}
	out := make([]int32, n)
	for i := range out {
		out[i] = d.r.Int32()
	}
	return out
}

func (d *decoder) nullableInt32s(field string) []int32 {
	n, null := d.arrayLen(field, 4, true)
	if null || !d.ok() {
		return nil
	}
	out := make([]int32, n)
	for i := range out {
		out[i] = d.r.Int32()
	}
	return out
}

func (d *decoder) compactStrings(field string) []string {
	n, _ := d.arrayLen(field, 1, false)
	if !d.ok() {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.compactString(field)
		if !d.ok() {
			return nil
		}
	}
	return out
}

// array reads a non-nullable compact array of structs, each at least
// minSize bytes, with read decoding one element.
func array[T any](d *decoder, field string, minSize int, read func(*decoder, *T)) []T {
	n, _ := d.arrayLen(field, minSize, false)
	if !d.ok() {
		return nil
	}
	out := make([]T, n)
	for i := range out {
		read(d, &out[i])
		if !d.ok() {
			return nil
		}
	}
	return out
}

// tags reads a tagged-field section. known decodes a tag it knows from a
// decoder holding exactly that field's bytes and reports whether it knew
// it; unknown tags are skipped. A known field must fill its declared size.
func (d *decoder) tags(known func(tag int32, fd *decoder) bool) {
	n := d.uvarint()
	if !d.ok() {
		return
	}
	if n < 0 || int(n) > len(d.r.Src) {
		d.failf("%d tagged fields in %d bytes", uint32(n), len(d.r.Src))
		return
	}
	for range n {
		tag, size := d.uvarint(), d.uvarint()
		if size < 0 && d.ok() {
			d.failf("tagged field %d: size %d", uint32(tag), uint32(size))
		}
		body := d.r.Span(int(size))
		if !d.ok() {
			return
		}
		fd := newDecoder(body)
		if !known(tag, fd) {
			continue
		}
		if err := fd.finish(); err != nil {
			d.failf("tagged field %d: %w", tag, err)
			return
		}
	}
}

// skipTags reads a tagged-field section none of whose tags are known.
func (d *decoder) skipTags() {
	d.tags(func(int32, *decoder) bool { return false })
}
