package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBadValuesNameTheKey(t *testing.T) {
	cases := map[string]string{
		"num.partitions":                  "0",
		"message.max.bytes":               "abc",
		"log.segment.bytes":               "1000",
		"log.cleanup.policy":              "delete,shred",
		"compression.type":                "brotli",
		"log.message.timestamp.type":      "WallClock",
		"auto.create.topics.enable":       "yes",
		"log.cleaner.min.cleanable.ratio": "1.5",
		"node.id":                         "-3",
		"listeners":                       "PLAINTEXT:/nohost",
		"controller.quorum.voters":        "1@127.0.0.1",
		"process.roles":                   "broker,observer",
		"compression.gzip.level":          "12",
		"socket.request.max.bytes":        "9999999999",
	}
	for key, value := range cases {
		_, err := Parse(key+"="+value+"\n", nil)
		if err == nil {
			t.Errorf("%s=%s accepted", key, value)
			continue
		}
		if !strings.Contains(err.Error(), key) {
			t.Errorf("%s=%s: error does not name the key: %v", key, value, err)
		}
	}
}

func TestSensitiveValueNotInError(t *testing.T) {
	_, err := Parse("ssl.keystore.password=hunter2\nlisteners=SSL://:9094,CONTROLLER://:9093\n", nil)
	if err == nil {
		t.Fatal("an SSL listener must stop start-up")
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("error leaks a password: %v", err)
	}
}

func TestSecurityNotBuiltRefusesToStart(t *testing.T) {
	cases := map[string]string{
		"authorizer":         "authorizer.class.name=kafka.security.authorizer.AclAuthorizer\n",
		"ssl engine factory": "ssl.engine.factory.class=com.example.Factory\n",
	}
	for name, text := range cases {
		_, err := Parse(text, nil)
		if err == nil {
			t.Errorf("%s: started open", name)
			continue
		}
		if !strings.Contains(err.Error(), "not supported by Sluice yet") && !strings.Contains(err.Error(), "inter.broker") {
			t.Errorf("%s: unclear message: %v", name, err)
		}
	}
	// ssl.* keys alone, with plaintext listeners, are accepted and stored as Kafka does.
	c, err := Parse("ssl.truststore.location=/tmp/x\n", nil)
	if err != nil {
		t.Fatalf("ssl.* without an SSL listener: %v", err)
	}
	if c.String(SSLTruststoreLocation) != "/tmp/x" {
		t.Error("ssl.truststore.location not stored")
	}
}

func TestRetentionSynonymOrder(t *testing.T) {
	cases := []struct {
		text string
		want int64
	}{
		{"", 168 * 3_600_000},
		{"log.retention.hours=1\n", 3_600_000},
		{"log.retention.hours=1\nlog.retention.minutes=5\n", 300_000},
		{"log.retention.hours=1\nlog.retention.minutes=5\nlog.retention.ms=7\n", 7},
		{"log.retention.ms=-1\nlog.retention.hours=1\n", -1},
		{"log.retention.hours=-1\n", -1},
	}
	for _, tc := range cases {
		c, err := Parse(tc.text, nil)
		if err != nil {
			t.Fatalf("%q: %v", tc.text, err)
		}
		if got := c.Long(LogRetentionMs); got != tc.want {
			t.Errorf("%q: log.retention.ms = %d, want %d", tc.text, got, tc.want)
		}
		topic, err := c.ResolveTopic(nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := topic.Long(TopicRetentionMs); got != tc.want {
			t.Errorf("%q: topic retention.ms = %d, want %d", tc.text, got, tc.want)
		}
	}
	c, err := Parse("log.roll.hours=2\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Long(LogRollMs); got != 7_200_000 {
		t.Errorf("log.roll.ms from hours = %d", got)
	}
}

func TestOverridesBeatFileAndUnknownKeysKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.properties")
	text := "# comment\nnum.partitions = 3\nmy.plugin.setting=keep me\n"
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path, map[string]string{"num.partitions": "5"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Int(NumPartitions) != 5 {
		t.Errorf("override lost: num.partitions = %d", c.Int(NumPartitions))
	}
	if v, ok := c.Raw(SluiceKey{"my.plugin.setting"}); !ok || v != "keep me" {
		t.Errorf("unknown key = %q, %v", v, ok)
	}
	if got := c.UnknownKeys(); len(got) != 1 || got[0] != "my.plugin.setting" {
		t.Errorf("UnknownKeys = %v", got)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing"), nil); err == nil {
		t.Error("missing file accepted")
	}
}

func TestJavaPropertiesSyntax(t *testing.T) {
	text := "log.dirs=/a,\\\n   /b\n" + // continuation line
		"my\\:key:colon separated\n" + // escaped separator in the key, ':' as separator
		"my.unicode=caf\\u00e9\n" +
		"my.expansion=${not.expanded}\n" +
		"! bang comment\n" +
		"my.spaces    value with spaces\n"
	c, err := Parse(text, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.LogDirs(); len(got) != 2 || got[0] != "/a" || got[1] != "/b" {
		t.Errorf("log.dirs = %q", got)
	}
	want := map[string]string{
		"my:key":       "colon separated",
		"my.unicode":   "café",
		"my.expansion": "${not.expanded}",
		"my.spaces":    "value with spaces",
	}
	for k, w := range want {
		if v, _ := c.Raw(SluiceKey{k}); v != w {
			t.Errorf("%s = %q, want %q", k, v, w)
		}
	}
}

func TestKRaftValidation(t *testing.T) {
	bad := map[string]string{
		"controller not a voter":     "controller.quorum.voters=2@127.0.0.1:9093\n",
		"no quorum":                  "controller.quorum.voters=\n",
		"broker-only on controller":  "process.roles=broker\n",
		"controller-only with plain": "process.roles=controller\n",
		"duplicate listener":         "listeners=PLAINTEXT://:9092,PLAINTEXT://:9094,CONTROLLER://:9093\n",
		"duplicate voter":            "controller.quorum.voters=1@a:1,1@b:2\n",
		"shared port":                "listeners=PLAINTEXT://:9093,CONTROLLER://127.0.0.1:9093\n",
		"advertise 0.0.0.0":          "advertised.listeners=PLAINTEXT://0.0.0.0:9092\n",
		"unknown listener protocol":  "listeners=PLAINTEXT://:9092,CONTROLLER://:9093,EXTERNAL://:9094\n",
		"inter broker is controller": "inter.broker.listener.name=CONTROLLER\n",
	}
	for name, text := range bad {
		if _, err := Parse(text, nil); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	ok := map[string]string{
		"broker only": "process.roles=broker\nnode.id=4\nlisteners=PLAINTEXT://:9092\n" +
			"controller.quorum.bootstrap.servers=127.0.0.1:9093\n",
		"controller only": "process.roles=controller\nlisteners=CONTROLLER://127.0.0.1:9093\n",
		"v4 and v6 share a port": "listeners=PLAINTEXT://127.0.0.1:9092,V6://[::1]:9092,CONTROLLER://127.0.0.1:9093\n" +
			"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,V6:PLAINTEXT,CONTROLLER:PLAINTEXT\n",
		"ipv6 and extra listener": "listeners=PLAINTEXT://[::1]:9092,CONTROLLER://127.0.0.1:9093,internal://:9094\n" +
			"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,INTERNAL:PLAINTEXT\n" +
			"inter.broker.listener.name=INTERNAL\n",
	}
	for name, text := range ok {
		c, err := Parse(text, nil)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if name == "ipv6 and extra listener" {
			ls := c.Listeners()
			if ls[0].Host != "::1" || ls[2].Name != "INTERNAL" || c.InterBrokerListenerName() != "INTERNAL" {
				t.Errorf("listeners = %+v", ls)
			}
		}
	}
}

func TestResolveTopicValidation(t *testing.T) {
	c := Defaults()
	cases := map[string]map[string]string{
		"cleanup.policy":                        {"cleanup.policy": "compact,forever"},
		"retention.ms":                          {"retention.ms": "-5"},
		"no.such.key":                           {"no.such.key": "1"},
		"max.message.bytes":                     {"max.message.bytes": "big"},
		"min.compaction.lag.ms":                 {"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"},
		"leader.replication.throttled.replicas": {"leader.replication.throttled.replicas": "0:x"},
	}
	for key, set := range cases {
		_, err := c.ResolveTopic(set)
		if err == nil {
			t.Errorf("%v accepted", set)
			continue
		}
		if !strings.Contains(err.Error(), key) || !errors.Is(err, errInvalidConfigForTest()) {
			t.Errorf("%v: %v", set, err)
		}
	}
	topic, err := c.ResolveTopic(map[string]string{"cleanup.policy": "compact,delete", "segment.bytes": "2000000"})
	if err != nil {
		t.Fatal(err)
	}
	if !topic.Compacted() || topic.Int(TopicSegmentBytes) != 2_000_000 || topic.Int(TopicMaxMessageBytes) != 1048588 {
		t.Errorf("topic values wrong: compacted=%v segment=%d max=%d", topic.Compacted(), topic.Int(TopicSegmentBytes), topic.Int(TopicMaxMessageBytes))
	}
}

func TestBrokerIDIsNodeIDSynonym(t *testing.T) {
	c, err := Parse("broker.id=1\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.NodeID() != 1 || c.Int(BrokerID) != 1 {
		t.Errorf("node.id %d broker.id %d", c.NodeID(), c.Int(BrokerID))
	}
	c, err = Parse("", map[string]string{"node.id": "1"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Int(BrokerID) != 1 {
		t.Errorf("broker.id should follow node.id, got %d", c.Int(BrokerID))
	}
	if _, err := Parse("node.id=1\nbroker.id=2\n", nil); err == nil || !strings.Contains(err.Error(), "broker.id") {
		t.Errorf("conflicting ids: %v", err)
	}
}

func TestAdvertisedListenerSplitAndBootstrapQuorum(t *testing.T) {
	c, err := Parse("listeners=PLAINTEXT://:9092,CONTROLLER://:9093\n"+
		"advertised.listeners=PLAINTEXT://broker.example:9092\n"+
		"controller.quorum.bootstrap.servers=127.0.0.1:9093\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if v := c.Voters(); len(v) != 0 {
		t.Errorf("bootstrap servers set, yet default voters kept: %+v", v)
	}
	if c.SingleNode() {
		t.Error("a dynamic quorum is not known to be a single node")
	}
	b := c.AdvertisedBrokerListeners()
	if len(b) != 1 || b[0].Host != "broker.example" {
		t.Errorf("broker listeners = %+v", b)
	}
	ctl := c.AdvertisedControllerListeners()
	if len(ctl) != 1 || ctl[0].Name != "CONTROLLER" || ctl[0].Port != 9093 {
		t.Errorf("controller listeners = %+v", ctl)
	}
}
