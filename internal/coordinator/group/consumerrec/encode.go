package consumerrec

import "github.com/twmb/franz-go/pkg/kbin"

// Strings longer than 32767 bytes cannot be written: Kafka refuses them (and
// a key's int16 length cannot hold them). Callers validate names first, as
// Kafka does for group and member ids.

func appendCompactStrings(dst []byte, ss []string) []byte {
	dst = kbin.AppendCompactArrayLen(dst, len(ss))
	for _, s := range ss {
		dst = kbin.AppendCompactString(dst, s)
	}
	return dst
}

func appendInt32s(dst []byte, vs []int32) []byte {
	dst = kbin.AppendCompactArrayLen(dst, len(vs))
	for _, v := range vs {
		dst = kbin.AppendInt32(dst, v)
	}
	return dst
}

func appendNullableInt32s(dst []byte, vs []int32) []byte {
	dst = kbin.AppendCompactNullableArrayLen(dst, len(vs), vs == nil)
	for _, v := range vs {
		dst = kbin.AppendInt32(dst, v)
	}
	return dst
}

// appendArray writes a compact array of structs with write encoding one.
func appendArray[T any](dst []byte, vs []T, write func([]byte, *T) []byte) []byte {
	dst = kbin.AppendCompactArrayLen(dst, len(vs))
	for i := range vs {
		dst = write(dst, &vs[i])
	}
	return dst
}

// appendTag writes one tagged field: its tag, its size, then body.
func appendTag(dst []byte, tag uint32, body []byte) []byte {
	dst = kbin.AppendUvarint(dst, tag)
	dst = kbin.AppendUvarint(dst, uint32(len(body)))
	return append(dst, body...)
}

// noTags is the empty tagged-field section.
func noTags(dst []byte) []byte { return kbin.AppendUvarint(dst, 0) }

// appendInt64Tag writes a section holding tag 0 as an int64 unless v is its
// default 0, as Kafka does for MetadataHash and AssignmentTimestamp.
func appendInt64Tag(dst []byte, v int64) []byte {
	if v == 0 {
		return noTags(dst)
	}
	dst = kbin.AppendUvarint(dst, 1)
	return appendTag(dst, 0, kbin.AppendInt64(nil, v))
}
