package consumerrec

import (
	"bytes"
	"reflect"
	"testing"
)

// codec is what every key and value type implements.
type codec[T any] interface {
	*T
	AppendTo(dst []byte) []byte
	ReadFrom(b []byte) error
}

// fuzzRoundTrip checks a ReadFrom on arbitrary bytes: it never panics, and
// whatever decodes re-encodes to bytes that decode equal and re-encode the
// same. The seeds are the goldens of recordType, keys or values.
func fuzzRoundTrip[T any, P codec[T]](f *testing.F, recordType int16, keys bool) {
	for _, g := range readGoldens(f) {
		if typ, _ := RecordType(g.key); typ != recordType {
			continue
		}
		switch {
		case keys:
			f.Add(g.key)
		case g.value != nil:
			f.Add(g.value)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		first := P(new(T))
		if first.ReadFrom(b) != nil {
			return
		}
		enc := first.AppendTo(nil)
		second := P(new(T))
		if err := second.ReadFrom(enc); err != nil {
			t.Fatalf("re-encoded %x does not decode: %v (from %x)", enc, err, b)
		}
		if !reflect.DeepEqual(first, second) {
			t.Fatalf("round trip differs:\n first %#v\nsecond %#v", first, second)
		}
		if again := second.AppendTo(nil); !bytes.Equal(again, enc) {
			t.Fatalf("encoding unstable: %x then %x", enc, again)
		}
	})
}

func FuzzConsumerGroupMetadataKey(f *testing.F) {
	fuzzRoundTrip[ConsumerGroupMetadataKey](f, TypeConsumerGroupMetadata, true)
}

func FuzzConsumerGroupMetadataValue(f *testing.F) {
	fuzzRoundTrip[ConsumerGroupMetadataValue](f, TypeConsumerGroupMetadata, false)
}

func FuzzConsumerGroupPartitionMetadataKey(f *testing.F) {
	fuzzRoundTrip[ConsumerGroupPartitionMetadataKey](f, TypeConsumerGroupPartitionMetadata, true)
}

func FuzzConsumerGroupPartitionMetadataValue(f *testing.F) {
	fuzzRoundTrip[ConsumerGroupPartitionMetadataValue](f, TypeConsumerGroupPartitionMetadata, false)
}

func FuzzConsumerGroupMemberMetadataKey(f *testing.F) {
	fuzzRoundTrip[ConsumerGroupMemberMetadataKey](f, TypeConsumerGroupMemberMetadata, true)
}

func FuzzConsumerGroupMemberMetadataValue(f *testing.F) {
	fuzzRoundTrip[ConsumerGroupMemberMetadataValue](f, TypeConsumerGroupMemberMetadata, false)
}

func FuzzConsumerGroupTargetAssignmentMetadataKey(f *testing.F) {
	fuzzRoundTrip[ConsumerGroupTargetAssignmentMetadataKey](f, TypeConsumerGroupTargetAssignmentMetadata, true)
}

func FuzzConsumerGroupTargetAssignmentMetadataValue(f *testing.F) {
	fuzzRoundTrip[ConsumerGroupTargetAssignmentMetadataValue](f, TypeConsumerGroupTargetAssignmentMetadata, false)
}

func FuzzConsumerGroupTargetAssignmentMemberKey(f *testing.F) {
	fuzzRoundTrip[ConsumerGroupTargetAssignmentMemberKey](f, TypeConsumerGroupTargetAssignmentMember, true)
}

func FuzzConsumerGroupTargetAssignmentMemberValue(f *testing.F) {
	fuzzRoundTrip[ConsumerGroupTargetAssignmentMemberValue](f, TypeConsumerGroupTargetAssignmentMember, false)
}

func FuzzConsumerGroupCurrentMemberAssignmentKey(f *testing.F) {
	fuzzRoundTrip[ConsumerGroupCurrentMemberAssignmentKey](f, TypeConsumerGroupCurrentMemberAssignment, true)
}

func FuzzConsumerGroupCurrentMemberAssignmentValue(f *testing.F) {
	fuzzRoundTrip[ConsumerGroupCurrentMemberAssignmentValue](f, TypeConsumerGroupCurrentMemberAssignment, false)
}

func FuzzConsumerGroupRegularExpressionKey(f *testing.F) {
	fuzzRoundTrip[ConsumerGroupRegularExpressionKey](f, TypeConsumerGroupRegularExpression, true)
}

func FuzzConsumerGroupRegularExpressionValue(f *testing.F) {
	fuzzRoundTrip[ConsumerGroupRegularExpressionValue](f, TypeConsumerGroupRegularExpression, false)
}
