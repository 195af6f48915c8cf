package config

import (
	"strings"
	"testing"
)

func TestDefaultsMatchKafka(t *testing.T) {
	c := Defaults()
	longs := map[string]int64{
		"message.max.bytes":                     1048588,
		"log.segment.bytes":                     1 << 30,
		"log.retention.ms":                      7 * 24 * 3600 * 1000,
		"log.retention.bytes":                   -1,
		"offsets.retention.minutes":             10080,
		"log.cleaner.delete.retention.ms":       24 * 3600 * 1000,
		"min.insync.replicas":                   1,
		"group.initial.rebalance.delay.ms":      3000,
		"replica.lag.time.max.ms":               30000,
		"broker.session.timeout.ms":             9000,
		"controller.quorum.election.timeout.ms": 1000,
		"controller.quorum.fetch.timeout.ms":    2000,
		"offsets.topic.num.partitions":          50,
		"num.partitions":                        1,
		"default.replication.factor":            1,
		"log.index.interval.bytes":              4096,
		"log.index.size.max.bytes":              10 * 1024 * 1024,
		"socket.request.max.bytes":              100 * 1024 * 1024,
		"log.roll.ms":                           168 * 3600 * 1000,
	}
	for k, want := range longs {
		if got := integerByName(c, k); got != want {
			t.Errorf("%s = %d, want Kafka's %d", k, got, want)
		}
	}
	if !c.Bool(AutoCreateTopicsEnable) {
		t.Error("auto.create.topics.enable should default to true")
	}
	if got := c.List(LogCleanupPolicy); len(got) != 1 || got[0] != "delete" {
		t.Errorf("log.cleanup.policy = %v", got)
	}
	if got := c.String(CompressionType); got != "producer" {
		t.Errorf("compression.type = %q", got)
	}
	if c.IsSet(LogRetentionMinutes) {
		t.Error("log.retention.minutes has a null default in Kafka")
	}
	if got := c.Duration(LogRetentionMs).Hours(); got != 168 {
		t.Errorf("log.retention.ms as duration = %vh", got)
	}
}

func TestSluiceNoFlagDefaults(t *testing.T) {
	c := Defaults()
	if got := c.ProcessRoles(); strings.Join(got, ",") != "broker,controller" {
		t.Errorf("process.roles = %v", got)
	}
	if c.NodeID() != 1 {
		t.Errorf("node.id = %d", c.NodeID())
	}
	ls := c.Listeners()
	if len(ls) != 2 || ls[0].Addr() != "127.0.0.1:9092" || ls[0].Name != "PLAINTEXT" ||
		ls[1].Name != "CONTROLLER" || ls[1].Protocol != "PLAINTEXT" || ls[1].Port != 9093 {
		t.Errorf("listeners = %+v", ls)
	}
	if adv := c.AdvertisedListeners(); len(adv) != 2 || adv[0] != ls[0] {
		t.Errorf("advertised.listeners should default to listeners, got %+v", adv)
	}
	if v := c.Voters(); len(v) != 1 || v[0].ID != 1 || v[0].Addr() != "127.0.0.1:9093" {
		t.Errorf("voters = %+v", v)
	}
	if d := c.LogDirs(); len(d) != 1 || d[0] != "./data" {
		t.Errorf("log.dirs = %v", d)
	}
	if c.InterBrokerListenerName() != "PLAINTEXT" {
		t.Errorf("inter broker listener = %q", c.InterBrokerListenerName())
	}
}

func TestEveryGeneratedDefaultParses(t *testing.T) {
	for _, set := range [][]KeyDef{BrokerKeys(), TopicKeys()} {
		for _, d := range set {
			if d.Required || d.DefaultNull {
				continue
			}
			if err := validateValue(d, d.Default); err != nil {
				t.Errorf("Kafka's own default fails validation: %v", err)
			}
		}
	}
	if len(BrokerKeys()) < 300 || len(TopicKeys()) < 30 {
		t.Fatalf("key table looks truncated: %d broker, %d topic keys", len(BrokerKeys()), len(TopicKeys()))
	}
}

func TestSingleNodeDeviations(t *testing.T) {
	c := Defaults()
	if !c.SingleNode() {
		t.Fatal("the no-flag node is a single-node cluster")
	}
	for _, k := range []string{"offsets.topic.replication.factor", "transaction.state.log.replication.factor", "transaction.state.log.min.isr"} {
		if got := integerByName(c, k); got != 1 {
			t.Errorf("single node: %s = %d, want 1", k, got)
		}
	}
	multi, err := Parse("controller.quorum.voters=1@127.0.0.1:9093,2@127.0.0.1:9193,3@127.0.0.1:9293\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if multi.SingleNode() {
		t.Fatal("three voters is not a single node")
	}
	want := map[string]int64{"offsets.topic.replication.factor": 3, "transaction.state.log.replication.factor": 3, "transaction.state.log.min.isr": 2}
	for k, w := range want {
		if got := integerByName(multi, k); got != w {
			t.Errorf("multi node: %s = %d, want Kafka's %d", k, got, w)
		}
	}
	explicit, err := Parse("offsets.topic.replication.factor=3\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if int64(explicit.Int(OffsetsTopicReplicationFactor)) != 3 {
		t.Error("an explicit value must win over the single-node default")
	}
}
