package node

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/controller"
	"github.com/sluice-io/sluice/internal/coordinator/group"
	"github.com/sluice-io/sluice/internal/metadata"
)

// The node's policy validates GROUP resources with Kafka's GroupConfig
// rules: a valid set is stored for a group that does not exist, a value
// outside the broker's bounds is INVALID_CONFIG with Kafka's message.
func TestGroupConfigsThroughTheNodePolicy(t *testing.T) {
	c := controller.New(controller.Options{Configs: configPolicy{cfg: config.Defaults()}})
	im := metadata.EmptyImage()
	alter := func(key, value string) ([]metadata.Record, kmsg.IncrementalAlterConfigsResponseResource) {
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		req.Resources = []kmsg.IncrementalAlterConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeGroupConfig, ResourceName: "g",
			Configs: []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: key, Op: kmsg.IncrementalAlterConfigOpSet, Value: &value}}}}
		recs, resp := c.IncrementalAlterConfigs(im, req)
		return recs, resp.Resources[0]
	}
	recs, r := alter("share.auto.offset.reset", "earliest")
	if r.ErrorCode != 0 || len(recs) != 1 {
		t.Fatalf("valid set: code %d, %d records", r.ErrorCode, len(recs))
	}
	if cr := recs[0].(*metadata.ConfigRecord); cr.ResourceType != metadata.ConfigResourceGroup || cr.ResourceName != "g" {
		t.Fatalf("record %+v", cr)
	}
	recs, r = alter("share.record.lock.duration.ms", "90000")
	if r.ErrorCode != kerr.InvalidConfig.Code || deref(r.ErrorMessage) != "share.record.lock.duration.ms must be in the range 15000 to 60000 inclusive." || len(recs) != 0 {
		t.Fatalf("out of range: code %d %q, %d records", r.ErrorCode, deref(r.ErrorMessage), len(recs))
	}
}

// The consumer group coordinator resolves a group's consumer.* overrides
// with the broker's values under them.
func TestConsumerGroupTimeoutsResolveGroupConfigs(t *testing.T) {
	var cfg group.Config
	if err := consumerGroupConfig(config.Defaults(), &cfg); err != nil {
		t.Fatal(err)
	}
	session, hb := cfg.ResolveConsumerTimeouts(map[string]string{"consumer.session.timeout.ms": "50000"})
	if session != 50*time.Second || hb != 5*time.Second {
		t.Fatalf("session %v heartbeat %v, want 50s and the broker's 5s", session, hb)
	}
}
