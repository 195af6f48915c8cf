package cli

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A Produce response read off the wire gives up its partitions' messages.
func TestProduceMessagesReadResponse(t *testing.T) {
	for _, version := range []int16{8, 9, 11} {
		resp := kmsg.NewProduceResponse()
		resp.Version = version
		msg := "compacted topic cannot accept a record without a key"
		p := kmsg.NewProduceResponseTopicPartition()
		p.Partition, p.ErrorCode, p.ErrorMessage = 2, kerr.InvalidRecord.Code, &msg
		topic := kmsg.NewProduceResponseTopic()
		topic.Topic, topic.Partitions = "demo", []kmsg.ProduceResponseTopicPartition{p}
		resp.Topics = []kmsg.ProduceResponseTopic{topic}
		body := resp.AppendTo(nil)
		if resp.IsFlexible() {
			body = append([]byte{0}, body...) // the response header's empty tagged fields
		}
		var seen []int32
		m := newProduceMessages(func(partition int32, err error) { seen = append(seen, partition) })
		m.readResponse(version, body)
		if got := m.message(kerr.InvalidRecord.Code); got != msg || len(seen) != 1 || seen[0] != 2 {
			t.Fatalf("v%d: message %q, partitions %v", version, got, seen)
		}
	}
}

// FuzzProduceSniff: whatever bytes a connection carries, following them
// never panics and never keeps more than a response's limit.
func FuzzProduceSniff(f *testing.F) {
	f.Add(int16(9), []byte{0, 0, 0, 5, 0, 0, 0, 1, 0}, uint8(3))
	f.Add(int16(3), []byte{0xff, 0xff, 0xff, 0xff}, uint8(1))
	f.Add(int16(11), []byte{0, 0, 0, 8, 0, 0, 0, 7, 0x80, 0x80, 0x80, 0x01}, uint8(2))
	f.Fuzz(func(t *testing.T, version int16, stream []byte, step uint8) {
		m := newProduceMessages(func(int32, error) {})
		m.readResponse(version, stream)
		if _, ok := skipTags(stream); ok && len(stream) == 0 {
			t.Fatal("tags skipped in an empty buffer")
		}
		r := frameReader{keep: maxSniffedResponse}
		n := max(int(step), 1)
		for i := 0; i < len(stream); i += n {
			r.feed(stream[i:min(i+n, len(stream))], func(body []byte) {
				if len(body) > maxSniffedResponse {
					t.Fatalf("kept %d bytes", len(body))
				}
				m.readResponse(version, body)
			})
		}
	})
}
