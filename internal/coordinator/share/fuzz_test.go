package share

import (
	"bytes"
	"testing"
	"time"
)

// FuzzDecodeRecord feeds arbitrary keys and values to the decoders: they
// must not panic, and what they accept must encode back to bytes that
// decode to the same record.
func FuzzDecodeRecord(f *testing.F) {
	for _, g := range readRecordGoldens(f) {
		f.Add(g.key, g.value)
	}
	f.Fuzz(func(t *testing.T, key, value []byte) {
		r, ok, err := decodeRecord(key, value)
		if err != nil || !ok {
			return
		}
		enc := r.encode()
		again, ok, err := decodeRecord(enc.Key, enc.Value)
		if err != nil || !ok {
			t.Fatalf("re-encoded record does not decode: %v", err)
		}
		if enc2 := again.encode(); !bytes.Equal(enc2.Key, enc.Key) || !bytes.Equal(enc2.Value, enc.Value) {
			t.Fatalf("encoding is not stable")
		}
	})
}

// FuzzReplay replays arbitrary records into a Manager: nothing panics.
func FuzzReplay(f *testing.F) {
	for _, g := range readRecordGoldens(f) {
		f.Add(g.key, g.value)
	}
	f.Fuzz(func(t *testing.T, key, value []byte) {
		m := NewManager(DefaultConfig(), time.UnixMilli(0))
		_ = m.Replay(0, key, value)
		_ = m.Replay(1, key, value)
	})
}
