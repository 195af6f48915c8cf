package config

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func entryByName(t *testing.T, entries []ConfigEntry, name string) ConfigEntry {
	t.Helper()
	for _, e := range entries {
		if e.Name == name {
			return e
		}
	}
	t.Fatalf("no entry %s", name)
	return ConfigEntry{}
}

func str(p *string) string {
	if p == nil {
		return "<null>"
	}
	return *p
}

func TestDescribeTopicSources(t *testing.T) {
	c, err := Parse("log.retention.hours=2\nlog.segment.bytes = 2000000\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err = c.WithDynamic(map[string]string{"compression.type": "zstd"}, map[string]string{"log.cleanup.policy": "compact", "compression.type": "lz4"})
	if err != nil {
		t.Fatal(err)
	}
	overrides := map[string]string{"max.message.bytes": "2048"}
	all := c.DescribeTopic(overrides, nil)
	cases := []struct {
		name, value string
		source      kmsg.ConfigSource
		synonyms    int
	}{
		{"max.message.bytes", "2048", kmsg.ConfigSourceDynamicTopicConfig, 2},            // topic, default message.max.bytes
		{"retention.ms", "7200000", kmsg.ConfigSourceDefaultConfig, 0},                   // Kafka lists log.retention.ms entries only
		{"segment.bytes", "2000000", kmsg.ConfigSourceStaticBrokerConfig, 2},             // static, default
		{"cleanup.policy", "compact", kmsg.ConfigSourceDynamicDefaultBrokerConfig, 2},    // dyn default, default
		{"compression.type", "zstd", kmsg.ConfigSourceDynamicBrokerConfig, 3},            // dyn broker, dyn default, default
		{"segment.jitter.ms", "0", kmsg.ConfigSourceDefaultConfig, 0},                    // from log.roll.jitter.hours, unlisted
		{"leader.replication.throttled.replicas", "", kmsg.ConfigSourceDefaultConfig, 0}, // no synonym
	}
	for _, tc := range cases {
		e := entryByName(t, all, tc.name)
		if str(e.Value) != tc.value || e.Source != tc.source || len(e.Synonyms) != tc.synonyms {
			t.Errorf("%s: value %s source %v synonyms %+v; want %s %v %d", tc.name, str(e.Value), e.Source, e.Synonyms, tc.value, tc.source, tc.synonyms)
		}
		if e.ReadOnly {
			t.Errorf("%s: topic configs are not read-only", tc.name)
		}
	}
	// Checked against Kafka 4.4.0 with tools/configgen/describediff: a topic key's synonyms
	// start at its first broker synonym, so static log.retention.hours is not listed.
	ret := entryByName(t, all, "retention.ms")
	withMs, err := c.WithDynamic(nil, map[string]string{"log.retention.ms": "1000", "log.cleanup.policy": "compact"})
	if err != nil {
		t.Fatal(err)
	}
	e := entryByName(t, withMs.DescribeTopic(nil, []string{"retention.ms"}), "retention.ms")
	if str(e.Value) != "1000" || e.Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig || len(e.Synonyms) != 3 || e.Synonyms[0].Name != "log.retention.ms" || e.Synonyms[1].Name != "log.retention.hours" {
		t.Errorf("retention.ms over dynamic log.retention.ms: %s %v %+v", str(e.Value), e.Source, e.Synonyms)
	}
	if ret.Type != kmsg.ConfigTypeLong || ret.Documentation == nil {
		t.Errorf("retention.ms type %v doc %v", ret.Type, ret.Documentation)
	}
	some := c.DescribeTopic(nil, []string{"retention.ms", "nope"})
	if len(some) != 1 {
		t.Errorf("asked for one known key, got %d entries", len(some))
	}
}

func TestDescribeBroker(t *testing.T) {
	c, err := Parse("log.retention.minutes=30\nssl.keystore.password=secret\nnum.io.threads=4\nmy.plugin=x\nlog.cleanup.policy = compact , delete\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	all := c.DescribeBroker(nil)
	public := 0
	for _, d := range BrokerKeys() {
		if !d.Internal {
			public++
		}
	}
	if len(all) != public+1 {
		t.Fatalf("full broker set has %d entries, want %d known and 1 unknown", len(all), public)
	}
	// As Kafka: an unknown key may be secret, so it is sensitive, read-only and hidden.
	if u := entryByName(t, all, "my.plugin"); u.Value != nil || !u.Sensitive || !u.ReadOnly || u.Type != kmsg.ConfigTypeUnknown {
		t.Errorf("unknown key entry: %+v", u)
	}
	// The value is normalised, the synonyms show the text as written.
	if p := entryByName(t, all, "log.cleanup.policy"); str(p.Value) != "compact,delete" || str(p.Synonyms[0].Value) != "compact , delete" {
		t.Errorf("log.cleanup.policy: %s, synonyms %+v", str(p.Value), p.Synonyms)
	}
	pw := entryByName(t, all, "ssl.keystore.password")
	if pw.Value != nil || !pw.Sensitive || pw.Source != kmsg.ConfigSourceStaticBrokerConfig || pw.Synonyms[0].Value != nil {
		t.Errorf("sensitive entry leaked or mis-sourced: %+v", pw)
	}
	ms := entryByName(t, all, "log.retention.ms")
	if ms.Value != nil || ms.Source != kmsg.ConfigSourceDefaultConfig || len(ms.Synonyms) != 0 {
		t.Errorf("log.retention.ms is unset in Kafka's describe: %s %v %+v", str(ms.Value), ms.Source, ms.Synonyms)
	}
	mins := entryByName(t, all, "log.retention.minutes")
	if str(mins.Value) != "30" || mins.Source != kmsg.ConfigSourceStaticBrokerConfig || len(mins.Synonyms) != 2 {
		t.Errorf("log.retention.minutes: %s %v %+v", str(mins.Value), mins.Source, mins.Synonyms)
	}
	if !entryByName(t, all, "node.id").ReadOnly || entryByName(t, all, "num.io.threads").ReadOnly {
		t.Error("read-only flags wrong")
	}
	if e := entryByName(t, all, "offsets.topic.replication.factor"); str(e.Value) != "1" || !e.IsDefault() {
		t.Errorf("single-node default reported as %s %v", str(e.Value), e.Source)
	}
	if e := entryByName(t, all, "log.cleaner.min.cleanable.ratio"); str(e.Value) != "0.5" || e.Type != kmsg.ConfigTypeDouble {
		t.Errorf("double rendering: %s", str(e.Value))
	}
}

func TestWithDynamicRefusals(t *testing.T) {
	c := Defaults()
	if _, err := c.WithDynamic(map[string]string{"node.id": "2"}, nil); err == nil {
		t.Error("read-only key accepted dynamically")
	}
	if _, err := c.WithDynamic(nil, map[string]string{"listeners": "PLAINTEXT://:1"}); err == nil {
		t.Error("per-broker key accepted as a cluster default")
	}
	if _, err := c.WithDynamic(map[string]string{"log.retention.ms": "soon"}, nil); err == nil {
		t.Error("bad dynamic value accepted")
	}
	d, err := c.WithDynamic(map[string]string{"log.retention.ms": "1000"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.Long(LogRetentionMs) != 1000 || c.Long(LogRetentionMs) == 1000 {
		t.Error("WithDynamic must return a new config and leave the old one alone")
	}
}

func TestJavaDouble(t *testing.T) {
	cases := map[float64]string{0.5: "0.5", 10: "10.0", 0: "0.0", 1e7: "1.0E7", 1.5e-4: "1.5E-4", -2: "-2.0"}
	for f, want := range cases {
		if got := javaDouble(f); got != want {
			t.Errorf("javaDouble(%v) = %s, want %s", f, got, want)
		}
	}
}
