package records

// Validated is a partition's produced records that Validate accepted: the
// bytes (after Validate's rewrites) and the header of each batch, parsed
// and CRC-checked once. Only Validate fills one, so a log appending a
// Validated skips the second parse and CRC pass a leader append used to
// make; the zero value holds no batch and a log refuses it.
//
// Invariant: buf is exactly the batches of headers, back to back, and
// nobody writes to buf between Validate and the append (the log then
// rewrites only base offset and partition leader epoch, outside the CRC).
type Validated struct {
	buf []byte
	// one holds the header: Validate accepts one batch per partition, as
	// Kafka does, so no slice is allocated for it.
	one [1]Header
	n   int
}

// Bytes returns the validated batches.
func (v *Validated) Bytes() []byte { return v.buf }

// Headers returns the batches' headers, in order (at most one today).
func (v *Validated) Headers() []Header { return v.one[:v.n] }
