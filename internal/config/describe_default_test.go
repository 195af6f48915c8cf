package config

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestDescribeBrokerDefaultAsKafka: the transcript of kafka-configs --entity-default
// --describe against Kafka 4.4.0 (bench/kafka-ref) with log.retention.hours=100 in the file,
// message.max.bytes=1500 and log.retention.ms=1000 on broker 1 and message.max.bytes=1024,
// log.retention.ms=2000 as the default:
//
//	log.retention.ms=2000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=2000}
//	message.max.bytes=1024 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:message.max.bytes=1024}
func TestDescribeBrokerDefaultAsKafka(t *testing.T) {
	static, err := Parse("", map[string]string{"node.id": "1", "log.retention.hours": "100"})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := static.WithDynamic(map[string]string{"message.max.bytes": "1500", "log.retention.ms": "1000"},
		map[string]string{"message.max.bytes": "1024", "log.retention.ms": "2000"})
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.DescribeBrokerDefault(nil)
	want := []struct{ name, value, syn string }{
		{"log.retention.ms", "2000", "log.retention.ms=2000"},
		{"message.max.bytes", "1024", "message.max.bytes=1024"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		e := got[i]
		if e.Name != w.name || e.Value == nil || *e.Value != w.value || e.Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig {
			t.Errorf("entry %d = %s=%v (%v), want %s=%s", i, e.Name, e.Value, e.Source, w.name, w.value)
		}
		if len(e.Synonyms) != 1 || e.Synonyms[0].Name+"="+*e.Synonyms[0].Value != w.syn ||
			e.Synonyms[0].Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig {
			t.Errorf("%s synonyms %+v, want only DYNAMIC_DEFAULT_BROKER_CONFIG:%s", w.name, e.Synonyms, w.syn)
		}
	}
	if only := cfg.DescribeBrokerDefault([]string{"message.max.bytes"}); len(only) != 1 {
		t.Fatalf("asked for one key, got %d", len(only))
	}
}
