package config

import "testing"

// TestCheckLiveValuesAsKafka: the messages Kafka 4.4.0 (bench/kafka-ref, kafka-configs
// --entity-type brokers --entity-name 1 --alter) gives for these values, but for threads=0
// (Kafka: "/ by zero"); a static file is not checked here.
func TestCheckLiveValuesAsKafka(t *testing.T) {
	static, err := Parse("", map[string]string{"node.id": "1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ key, value, want string }{
		{"log.cleaner.threads", "0", "Log cleaner threads should be at least 1"},
		{"log.cleaner.dedupe.buffer.size", "1", "requirement failed: log.cleaner.dedupe.buffer.size must be at least 1MB per cleaner thread."},
		{"max.connections.per.ip", "0", "requirement failed: max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides property is set."},
		{"max.connections.per.ip.overrides", "foo", `Error parsing configuration property 'max.connections.per.ip.overrides': "foo" is not host:count`},
		{"max.connections.per.ip.overrides", "127.0.0.1:x", `Error parsing configuration property 'max.connections.per.ip.overrides': "127.0.0.1:x" is not host:count`},
		{"log.retention.ms", "abc", "Invalid value abc for configuration log.retention.ms: Not a number of type LONG"},
		{"message.max.bytes", "-5", "Invalid value -5 for configuration message.max.bytes: Value must be at least 0"},
		{"log.cleaner.io.max.bytes.per.second", "abc", "Invalid value abc for configuration log.cleaner.io.max.bytes.per.second: Not a number of type DOUBLE"},
		{"max.connections", "-1", "Invalid value -1 for configuration max.connections: Value must be at least 0"},
		{"log.cleaner.threads", "2", ""},
		{"max.connections.per.ip.overrides", "127.0.0.1:3, [::1]:2", ""},
	} {
		_, err := static.WithDynamic(map[string]string{c.key: c.value}, nil)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s=%s: %v", c.key, c.value, err)
		case c.want != "" && (err == nil || err.Error() != c.want):
			t.Errorf("%s=%s: %v, want %q", c.key, c.value, err, c.want)
		}
	}
	if _, err := static.WithDynamic(map[string]string{"max.connections.per.ip": "0", "max.connections.per.ip.overrides": "10.0.0.1:5"}, nil); err != nil {
		t.Errorf("zero per address with overrides: %v", err)
	}
}
