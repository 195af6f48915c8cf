package node

import (
	"errors"
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/broker"
	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/controller"
	"github.com/sluice-io/sluice/internal/metadata"
)

// TestBrokerConfigsNotAppliedLiveAreRefused runs the controller with the
// node's policy: a dynamic broker change a running node would not apply is
// refused with Kafka's INVALID_REQUEST and a message naming the key, and
// nothing is stored; a live key is stored, per broker and as the default.
func TestBrokerConfigsNotAppliedLiveAreRefused(t *testing.T) {
	c := controller.New(controller.Options{Configs: configPolicy{cfg: config.Defaults()}})
	im := metadata.EmptyImage()
	for _, tc := range []struct {
		resource, key, value string
		code                 *kerr.Error // nil: accepted
		msg                  string
	}{
		{"1", "listeners", "PLAINTEXT://127.0.0.1:9092,EXTRA://127.0.0.1:9094", kerr.InvalidRequest,
			"Cannot update these configs dynamically, Sluice does not apply them without a restart: [listeners]"},
		{"", "listeners", "PLAINTEXT://127.0.0.1:9092", kerr.InvalidRequest,
			"Cannot update these configs at default cluster level, broker id must be specified: [listeners]"},
		{"1", "ssl.keystore.password", "secret", kerr.InvalidRequest,
			"These security configs can be dynamically updated only per-listener using the listener prefix: [ssl.keystore.password]"},
		{"", "num.io.threads", "16", kerr.InvalidRequest,
			"Cannot update these configs dynamically, Sluice does not apply them without a restart: [num.io.threads]"},
		{"1", "log.retention.hours", "5", kerr.InvalidRequest, "Cannot update these configs dynamically: [log.retention.hours]"},
		{"1", "log.retention.ms", "abc", kerr.InvalidRequest,
			"Invalid value abc for configuration log.retention.ms: Not a number of type LONG"},
		{"1", "log.retention.ms", "60000", nil, ""},
		{"", "log.retention.ms", "60000", nil, ""},
		{"", "unclean.leader.election.enable", "true", nil, ""},
	} {
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		req.Resources = []kmsg.IncrementalAlterConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeBroker, ResourceName: tc.resource,
			Configs: []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: tc.key, Op: kmsg.IncrementalAlterConfigOpSet, Value: &tc.value}}}}
		recs, resp := c.IncrementalAlterConfigs(im, req)
		r := resp.Resources[0]
		if tc.code == nil {
			if r.ErrorCode != 0 || len(recs) != 1 {
				t.Errorf("%s on broker %q: code %d %q, %d records; want stored", tc.key, tc.resource, r.ErrorCode, deref(r.ErrorMessage), len(recs))
			}
			continue
		}
		if r.ErrorCode != tc.code.Code || r.ErrorMessage == nil || *r.ErrorMessage != tc.msg || len(recs) != 0 {
			t.Errorf("%s on broker %q: code %d message %q, %d records; want %s %q", tc.key, tc.resource, r.ErrorCode, deref(r.ErrorMessage), len(recs), tc.code.Message, tc.msg)
		}
	}
	// Topic configs keep INVALID_CONFIG.
	err := configPolicy{cfg: config.Defaults()}.Validate(metadata.ConfigResource{Type: metadata.ConfigResourceTopic, Name: "t"}, map[string]string{"listeners": "x"})
	if !errors.Is(err, kerr.InvalidConfig) {
		t.Errorf("a broker key on a topic: %v, want INVALID_CONFIG", err)
	}
}

func deref(s *string) string {
	if s == nil {
		return "<null>"
	}
	return *s
}

// liveValues are non-default values of every key config.LiveBrokerKeys
// lists (but unclean.leader.election.enable, which the controller reads),
// and of the dynamic broker synonyms of topic keys it does not list.
var liveValues = map[string]string{
	"log.cleaner.delete.retention.ms":     "1000",
	"log.cleaner.max.compaction.lag.ms":   "100000",
	"log.cleaner.min.cleanable.ratio":     "0.7",
	"log.cleaner.min.compaction.lag.ms":   "1000",
	"log.cleanup.policy":                  "compact",
	"log.flush.interval.messages":         "10",
	"log.flush.interval.ms":               "1000",
	"log.index.interval.bytes":            "8192",
	"log.index.size.max.bytes":            "1048576",
	"log.message.timestamp.after.max.ms":  "1000",
	"log.message.timestamp.before.max.ms": "1000",
	"log.message.timestamp.type":          "LogAppendTime",
	"log.retention.bytes":                 "1000000",
	"log.retention.ms":                    "60000",
	"log.roll.jitter.ms":                  "1000",
	"log.roll.ms":                         "60000",
	"log.segment.bytes":                   "2097152",
	"log.segment.delete.delay.ms":         "1000",
	"message.max.bytes":                   "2000000",
	"min.insync.replicas":                 "2",

	"compression.type":               "gzip",
	"compression.gzip.level":         "5",
	"compression.lz4.level":          "12",
	"compression.zstd.level":         "7",
	"log.local.retention.bytes":      "1000",
	"log.local.retention.ms":         "1000",
	"log.preallocate":                "true",
	"log.remote.copy.lag.bytes":      "1000",
	"log.remote.copy.lag.ms":         "1000",
	"max.decompressed.message.bytes": "1000000",
}

// TestLiveBrokerKeysAreApplied holds config.LiveBrokerKeys to what a node
// does: each key the list names has an applier registered on a running
// node's dynamic config hook (dynconfig.go), or changes the settings the
// broker pushes to its partitions and logs (per broker and as the cluster
// default), or, for unclean.leader.election.enable, the controller's
// election; each dynamic
// broker synonym of a topic key it does not name changes nothing, so it is
// rightly refused. A key that starts to be applied must join the list.
func TestLiveBrokerKeysAreApplied(t *testing.T) {
	static := config.Defaults()
	settings := func(cfg *config.Config) any {
		tc, err := cfg.ResolveTopic(nil)
		if err != nil {
			t.Fatal(err)
		}
		return broker.TopicSettings(tc)
	}
	base := settings(static)
	applied := func(key string, clusterDefault bool) bool {
		v, ok := liveValues[key]
		if !ok {
			t.Fatalf("no test value for %s", key)
		}
		one := map[string]string{key: v}
		var cfg *config.Config
		var err error
		if clusterDefault {
			cfg, err = static.WithDynamic(nil, one)
		} else {
			cfg, err = static.WithDynamic(one, nil)
		}
		if err != nil {
			t.Fatalf("%s=%s: %v", key, v, err)
		}
		return !reflect.DeepEqual(settings(cfg), base)
	}
	live := config.LiveBrokerKeys()
	n, _, _ := startNode(t, t.TempDir())
	followed := n.broker.dynconf.followed()
	for _, k := range live {
		if k == controller.UncleanLeaderElectionKey || followed[k] {
			continue
		}
		if !applied(k, false) || !applied(k, true) {
			t.Errorf("%s is listed as applied live but does not change the topic settings", k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(dynamicTopicSynonyms())) {
		if !slices.Contains(live, k) && applied(k, true) {
			t.Errorf("%s changes the topic settings but is refused as not applied live: add it to config's liveBrokerKeys", k)
		}
	}

	d := metadata.NewDelta(metadata.EmptyImage())
	on := "true"
	if err := d.Replay(0, 1, &metadata.ConfigRecord{ResourceType: metadata.ConfigResourceBroker, Name: controller.UncleanLeaderElectionKey, Value: &on}); err != nil {
		t.Fatal(err)
	}
	if !controller.UncleanLeaderElectionEnabled(d.Apply(), "t") {
		t.Errorf("the cluster default of %s does not reach the controller", controller.UncleanLeaderElectionKey)
	}
	if live, only := config.LiveBrokerKey(controller.UncleanLeaderElectionKey); !live || !only {
		t.Errorf("%s: live %t, cluster default only %t; the controller reads the cluster default only", controller.UncleanLeaderElectionKey, live, only)
	}
}

// dynamicTopicSynonyms are the broker keys Kafka updates dynamically that
// supply a topic key's default.
func dynamicTopicSynonyms() map[string]bool {
	dynamic := map[string]bool{}
	for _, d := range config.BrokerKeys() {
		if d.Update == config.UpdateClusterWide || d.Update == config.UpdatePerBroker {
			dynamic[d.Name] = true
		}
	}
	out := map[string]bool{}
	for _, d := range config.TopicKeys() {
		for _, s := range d.Synonyms {
			if dynamic[s.Name] && s.Name != controller.UncleanLeaderElectionKey {
				out[s.Name] = true
			}
		}
	}
	return out
}
