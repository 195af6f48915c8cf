package config

// topicMemo holds a TopicConfig's effective value of every topic key,
// resolved once when the TopicConfig is built. A TopicConfig never changes
// (a config change makes a new one: the node drops its cached TopicConfig on
// every config delta), so the memo needs no invalidation of its own. The
// data plane reads several topic keys on every produce append; without the
// memo each read walked the broker's synonym layers and converted units.
type topicMemo struct {
	values map[string]memoValue
}

type memoValue struct {
	raw string
	ok  bool // false for a key with no value (Kafka's null default)
}

// newTopicMemo resolves every topic key of t.
func newTopicMemo(t TopicConfig) *topicMemo {
	m := &topicMemo{values: make(map[string]memoValue, len(t.broker.topicDefs))}
	for key := range t.broker.topicDefs {
		raw, ok := t.resolveUncached(key)
		m.values[key] = memoValue{raw: raw, ok: ok}
	}
	return m
}
