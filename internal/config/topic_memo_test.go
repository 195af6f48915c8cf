package config

import "testing"

// TestTopicMemoMatchesResolution checks every topic key's memoized value
// against resolving it through the layers, with a topic override, a static
// broker synonym in another unit and a dynamic broker default on top.
func TestTopicMemoMatchesResolution(t *testing.T) {
	c, err := Parse("log.retention.hours=48\nmin.insync.replicas=2\nlog.segment.bytes=536870912\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := c.WithDynamic(map[string]string{"log.roll.ms": "60000"}, map[string]string{"message.max.bytes": "2000000"})
	if err != nil {
		t.Fatal(err)
	}
	for _, broker := range []*Config{c, dyn} {
		topic, err := broker.ResolveTopic(map[string]string{"cleanup.policy": "compact,delete", "retention.bytes": "1000"})
		if err != nil {
			t.Fatal(err)
		}
		if topic.memo == nil || len(topic.memo.values) != len(broker.topicDefs) {
			t.Fatalf("memo missing or incomplete: %v", topic.memo)
		}
		for key := range broker.topicDefs {
			raw, ok := topic.resolveUncached(key)
			if m := topic.memo.values[key]; m.raw != raw || m.ok != ok {
				t.Errorf("%s: memo %q/%v, resolved %q/%v", key, m.raw, m.ok, raw, ok)
			}
		}
		if got := topic.Long(TopicRetentionMs); got != 48*3_600_000 {
			t.Errorf("retention.ms %d from log.retention.hours=48", got)
		}
		if got := topic.Int(TopicMinInsyncReplicas); got != 2 {
			t.Errorf("min.insync.replicas %d", got)
		}
		if !topic.Compacted() || topic.Long(TopicRetentionBytes) != 1000 {
			t.Errorf("overrides not seen: compacted %v retention.bytes %d", topic.Compacted(), topic.Long(TopicRetentionBytes))
		}
	}
	if got := func() int32 {
		topic, _ := dyn.ResolveTopic(nil)
		return topic.Int(TopicMaxMessageBytes)
	}(); got != 2000000 {
		t.Errorf("max.message.bytes %d from the dynamic default message.max.bytes", got)
	}
}
