package metadata

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/sluice-io/sluice/internal/kafka"
)

// Errors of record decoding. Every decoding failure wraps one of them.
var (
	ErrUnknownRecordType  = errors.New("metadata: unknown record type")
	ErrUnsupportedVersion = errors.New("metadata: record version newer than this build understands")
	ErrCorruptRecord      = errors.New("metadata: corrupt record")
)

// maxCollection bounds the element count of any decoded array or string, so
// a corrupt length cannot make the decoder allocate gigabytes.
const maxCollection = 1 << 20

// writer appends the primitive encodings of docs/metadata-records.md.
type writer struct{ b []byte }

func (w *writer) int8(v int8)   { w.b = append(w.b, byte(v)) }
func (w *writer) int16(v int16) { w.b = binary.BigEndian.AppendUint16(w.b, uint16(v)) }
func (w *writer) int32(v int32) { w.b = binary.BigEndian.AppendUint32(w.b, uint32(v)) }
func (w *writer) int64(v int64) { w.b = binary.BigEndian.AppendUint64(w.b, uint64(v)) }
func (w *writer) bool(v bool) {
	if v {
		w.int8(1)
	} else {
		w.int8(0)
	}
}
func (w *writer) uuid(u kafka.UUID) { w.b = append(w.b, u[:]...) }
func (w *writer) string(s string) {
	w.b = binary.AppendUvarint(w.b, uint64(len(s)))
	w.b = append(w.b, s...)
}

// bytes writes a byte string as uvarint length and the bytes.
func (w *writer) bytes(b []byte) {
	w.b = binary.AppendUvarint(w.b, uint64(len(b)))
	w.b = append(w.b, b...)
}

// float64 writes the IEEE 754 bits big-endian, as Kafka's float64.
func (w *writer) float64(v float64) { w.int64(int64(math.Float64bits(v))) }

// nullableString writes a null as length 0 and a present string as length+1.
func (w *writer) nullableString(s *string) {
	if s == nil {
		w.b = binary.AppendUvarint(w.b, 0)
		return
	}
	w.b = binary.AppendUvarint(w.b, uint64(len(*s))+1)
	w.b = append(w.b, *s...)
}

// int32s writes a null array as length 0 and a present one as length+1.
func (w *writer) int32s(v []int32) {
	if v == nil {
		w.b = binary.AppendUvarint(w.b, 0)
		return
	}
	w.b = binary.AppendUvarint(w.b, uint64(len(v))+1)
	for _, x := range v {
		w.int32(x)
	}
}

// uuids writes a null array as length 0 and a present one as length+1.
func (w *writer) uuids(v []kafka.UUID) {
	if v == nil {
		w.b = binary.AppendUvarint(w.b, 0)
		return
	}
	w.b = binary.AppendUvarint(w.b, uint64(len(v))+1)
	for _, u := range v {
		w.uuid(u)
	}
}

// reader decodes what writer wrote. The first failure sticks in err; later
// reads return zero values, so decoders check err once at the end.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: truncated or invalid %s", ErrCorruptRecord, what)
	}
}

func (r *reader) take(n int, what string) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || len(r.b) < n {
		r.fail(what)
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) int8() int8 {
	b := r.take(1, "int8")
	if b == nil {
		return 0
	}
	return int8(b[0])
}

func (r *reader) int16() int16 {
	b := r.take(2, "int16")
	if b == nil {
		return 0
	}
	return int16(binary.BigEndian.Uint16(b))
}

func (r *reader) int32() int32 {
	b := r.take(4, "int32")
	if b == nil {
		return 0
	}
	return int32(binary.BigEndian.Uint32(b))
}

func (r *reader) int64() int64 {
	b := r.take(8, "int64")
	if b == nil {
		return 0
	}
	return int64(binary.BigEndian.Uint64(b))
}

func (r *reader) bool() bool {
	switch r.int8() {
	case 0:
		return false
	case 1:
		return true
	default:
		r.fail("bool")
		return false
	}
}

func (r *reader) uuid() kafka.UUID {
	var u kafka.UUID
	copy(u[:], r.take(16, "uuid"))
	return u
}

func (r *reader) length(what string) int {
	if r.err != nil {
		return 0
	}
	n, size := binary.Uvarint(r.b)
	if size <= 0 || n > maxCollection {
		r.fail(what + " length")
		return 0
	}
	r.b = r.b[size:]
	return int(n)
}

func (r *reader) string() string {
	n := r.length("string")
	return string(r.take(n, "string"))
}

// bytes reads what writer.bytes wrote into a fresh slice (nil when empty).
func (r *reader) bytes() []byte {
	n := r.length("bytes")
	b := r.take(n, "bytes")
	if len(b) == 0 {
		return nil
	}
	return append([]byte(nil), b...)
}

func (r *reader) float64() float64 { return math.Float64frombits(uint64(r.int64())) }

func (r *reader) nullableString() *string {
	n := r.length("nullable string")
	if n == 0 || r.err != nil {
		return nil
	}
	s := string(r.take(n-1, "nullable string"))
	if r.err != nil {
		return nil
	}
	return &s
}

func (r *reader) int32s() []int32 {
	n := r.length("int32 array")
	if n == 0 || r.err != nil {
		return nil
	}
	if len(r.b) < (n-1)*4 {
		r.fail("int32 array")
		return nil
	}
	out := make([]int32, n-1)
	for i := range out {
		out[i] = r.int32()
	}
	return out
}

func (r *reader) uuids() []kafka.UUID {
	n := r.length("uuid array")
	if n == 0 || r.err != nil {
		return nil
	}
	if len(r.b) < (n-1)*16 {
		r.fail("uuid array")
		return nil
	}
	out := make([]kafka.UUID, n-1)
	for i := range out {
		out[i] = r.uuid()
	}
	return out
}
