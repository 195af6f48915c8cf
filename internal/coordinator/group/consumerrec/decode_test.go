package consumerrec

import (
	"errors"
	"reflect"
	"runtime"
	"testing"

	"github.com/twmb/franz-go/pkg/kbin"
)

// TestGoldenPrefixesAndTrailing checks that every proper prefix of a golden
// key or value fails to decode, and so does one with a byte appended.
func TestGoldenPrefixesAndTrailing(t *testing.T) {
	for _, g := range readGoldens(t) {
		typ, err := RecordType(g.key)
		if err != nil {
			t.Fatalf("%s: %v", g.name, err)
		}
		for n := range len(g.key) {
			if _, err := DecodeKey(g.key[:n]); err == nil {
				t.Errorf("%s: key prefix of %d bytes decoded", g.name, n)
			}
		}
		if _, err := DecodeKey(append(g.key[:len(g.key):len(g.key)], 0)); err == nil {
			t.Errorf("%s: key with a trailing byte decoded", g.name)
		}
		if g.value == nil {
			continue
		}
		for n := range len(g.value) {
			if _, err := DecodeValue(typ, g.value[:n]); err == nil {
				t.Errorf("%s: value prefix of %d bytes decoded", g.name, n)
			}
		}
		if _, err := DecodeValue(typ, append(g.value[:len(g.value):len(g.value)], 0)); err == nil {
			t.Errorf("%s: value with a trailing byte decoded", g.name)
		}
	}
}

func TestRecordTypeAndDispatch(t *testing.T) {
	if _, err := RecordType([]byte{0}); err == nil {
		t.Error("RecordType of a 1-byte key: no error")
	}
	// An offset commit key (type 1) is not ours.
	commit := kbin.AppendString(kbin.AppendInt16(nil, 1), "grp")
	if typ, err := RecordType(commit); err != nil || typ != 1 {
		t.Errorf("RecordType(offset commit key) = %d, %v", typ, err)
	}
	if _, err := DecodeKey(commit); !errors.Is(err, ErrUnknownRecordType) {
		t.Errorf("DecodeKey(offset commit key) = %v, want ErrUnknownRecordType", err)
	}
	// A key read as another type's key fails.
	key := (&ConsumerGroupMetadataKey{GroupID: "g"}).AppendTo(nil)
	if err := new(ConsumerGroupPartitionMetadataKey).ReadFrom(key); err == nil {
		t.Error("a type-3 key read as a type-4 key")
	}
	if v, err := DecodeValue(TypeConsumerGroupMetadata, nil); v != nil || err != nil {
		t.Errorf("DecodeValue(tombstone) = %v, %v", v, err)
	}
	if _, err := DecodeValue(TypeConsumerGroupMetadata, []byte{0, 1, 0, 0, 0, 0, 0}); !errors.Is(err, ErrUnknownVersion) {
		t.Errorf("value version 1: %v, want ErrUnknownVersion", err)
	}
}

func TestEncodeTypeMismatchPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Encode of a type-4 value under a type-3 key did not panic")
		}
	}()
	Encode(&ConsumerGroupMetadataKey{}, &ConsumerGroupPartitionMetadataValue{})
}

// TestUnknownTagsSkipped checks that tags this version does not know are
// skipped, before and after a known one, at the top and in nested structs.
func TestUnknownTagsSkipped(t *testing.T) {
	b := appendValueHeader(nil)
	b = kbin.AppendInt32(b, 9)
	b = kbin.AppendUvarint(b, 3)
	b = appendTag(b, 7, []byte{1, 2, 3})
	b = appendTag(b, 0, kbin.AppendInt64(nil, 11))
	b = appendTag(b, 1, nil)
	var v ConsumerGroupMetadataValue
	if err := v.ReadFrom(b); err != nil {
		t.Fatal(err)
	}
	if want := (ConsumerGroupMetadataValue{Epoch: 9, MetadataHash: 11}); v != want {
		t.Errorf("got %+v, want %+v", v, want)
	}

	b = appendValueHeader(nil)
	b = kbin.AppendCompactArrayLen(b, 1)
	b = kbin.AppendUuid(b, topic1)
	b = appendInt32s(b, []int32{4})
	b = kbin.AppendUvarint(b, 1)
	b = appendTag(b, 3, []byte{0xff})
	b = noTags(b)
	var m ConsumerGroupTargetAssignmentMemberValue
	if err := m.ReadFrom(b); err != nil {
		t.Fatal(err)
	}
	want := ConsumerGroupTargetAssignmentMemberValue{TopicPartitions: []TopicPartition{{TopicID: topic1, Partitions: []int32{4}}}}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("got %+v, want %+v", m, want)
	}
}

// TestHostileValues feeds values that lie about their lengths.
func TestHostileValues(t *testing.T) {
	head := func(int16) []byte { return appendValueHeader(nil) }
	cases := []struct {
		name string
		typ  int16
		b    []byte
	}{
		{"tag size longer than the int64", TypeConsumerGroupMetadata,
			appendTag(kbin.AppendUvarint(kbin.AppendInt32(head(3), 1), 1), 0, make([]byte, 9))},
		{"tag size shorter than the int64", TypeConsumerGroupMetadata,
			appendTag(kbin.AppendUvarint(kbin.AppendInt32(head(3), 1), 1), 0, make([]byte, 4))},
		{"more tags than bytes", TypeConsumerGroupMetadata,
			kbin.AppendUvarint(kbin.AppendInt32(head(3), 1), 1000)},
		{"huge topic count", TypeConsumerGroupPartitionMetadata,
			append(kbin.AppendUvarint(head(4), 1<<20), make([]byte, 64)...)},
		{"topic count past int32", TypeConsumerGroupPartitionMetadata,
			append(kbin.AppendUvarint(head(4), 1<<31), make([]byte, 64)...)},
		{"huge partition count", TypeConsumerGroupTargetAssignmentMember,
			append(kbin.AppendUvarint(kbin.AppendUuid(kbin.AppendCompactArrayLen(head(7), 1), topic1), 1<<30), 0, 0)},
		{"partition count of 2^32-1", TypeConsumerGroupTargetAssignmentMember,
			append(kbin.AppendUuid(kbin.AppendCompactArrayLen(head(7), 1), topic1), 0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0)},
		{"partition count not in 4-byte units", TypeConsumerGroupTargetAssignmentMember,
			append(kbin.AppendUuid(kbin.AppendCompactArrayLen(head(7), 1), topic1), 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)},
		{"null client id", TypeConsumerGroupMemberMetadata,
			append(head(5), 0, 0, 0)},
		{"null topic list", TypeConsumerGroupRegularExpression,
			append(head(16), 0)},
		{"string longer than int16", TypeConsumerGroupRegularExpression,
			append(kbin.AppendUvarint(kbin.AppendCompactArrayLen(head(16), 1), 40000), make([]byte, 40000)...)},
		{"varint too long", TypeConsumerGroupRegularExpression,
			append(head(16), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01)},
	}
	for _, c := range cases {
		var err error
		allocated := bytesAllocated(func() { _, err = DecodeValue(c.typ, c.b) })
		if err == nil {
			t.Errorf("%s: decoded", c.name)
		}
		// Allocation is bounded by the input, whatever the lengths claim.
		if limit := uint64(1024 + 64*len(c.b)); allocated > limit {
			t.Errorf("%s: allocated %d bytes for %d of input", c.name, allocated, len(c.b))
		}
	}
}

// bytesAllocated is the least that one call of f allocated over several
// calls: TotalAlloc counts the whole process, so a runtime or test-framework
// allocation landing inside one window (CI saw 6 KB) must not fail the limit.
func bytesAllocated(f func()) uint64 {
	least := ^uint64(0)
	for range 5 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	return least
}

// TestHostileKeys feeds keys with negative and overlong lengths.
func TestHostileKeys(t *testing.T) {
	for _, b := range [][]byte{
		{0, 3, 0xff, 0xff},
		{0, 3, 0x7f, 0xff, 'a'},
		{0, 5, 0, 1, 'g', 0xff, 0xfe},
	} {
		if _, err := DecodeKey(b); err == nil {
			t.Errorf("key %x decoded", b)
		}
	}
}
