package config

import "testing"

// BenchmarkTopicConfigAppendLookups reads the topic keys the data plane
// resolves for every produce append (node's dataPlaneTopicConfig), on a
// topic with one override over a broker with a few static settings.
func BenchmarkTopicConfigAppendLookups(b *testing.B) {
	c, err := Parse("min.insync.replicas=2\nlog.segment.bytes=536870912\nlog.retention.hours=48\n", nil)
	if err != nil {
		b.Fatal(err)
	}
	t, err := c.ResolveTopic(map[string]string{"max.message.bytes": "2097152"})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var sink int64
	for b.Loop() {
		if t.String(TopicMessageTimestampType) == "LogAppendTime" {
			sink++
		}
		sink += int64(len(t.List(TopicCleanupPolicy)))
		sink += int64(t.Int(TopicMinInsyncReplicas))
		sink += t.Long(TopicMessageTimestampBeforeMaxMs) + t.Long(TopicMessageTimestampAfterMaxMs)
		sink += int64(t.Int(TopicMaxMessageBytes)) + int64(t.Int(TopicSegmentBytes))
	}
	if sink == 0 {
		b.Fatal("no values read")
	}
}
