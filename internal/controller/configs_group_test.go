package controller

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/metadata"
)

// GROUP resources: SET and DELETE become ConfigRecords of type 32 for a
// group that does not exist, the whole resulting set goes to the policy,
// validate_only emits nothing, AlterConfigs replaces the set.
func TestGroupConfigRecords(t *testing.T) {
	var seen map[string]string
	c := New(Options{Configs: recordingPolicy{testPolicy{}, &seen}})
	im := metadata.EmptyImage()
	v := func(s string) *string { return &s }
	inc := func(validateOnly bool, cfgs ...kmsg.IncrementalAlterConfigsRequestResourceConfig) ([]metadata.Record, kmsg.IncrementalAlterConfigsResponseResource) {
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		req.ValidateOnly = validateOnly
		req.Resources = []kmsg.IncrementalAlterConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeGroupConfig, ResourceName: "g", Configs: cfgs}}
		recs, resp := c.IncrementalAlterConfigs(im, req)
		return recs, resp.Resources[0]
	}
	apply := func(recs []metadata.Record) {
		d := metadata.NewDelta(im)
		for _, r := range recs {
			if err := d.Replay(im.Offset()+1, 1, r); err != nil {
				t.Fatal(err)
			}
		}
		im = d.Apply()
	}
	set := kmsg.IncrementalAlterConfigOpSet
	recs, r := inc(true, kmsg.IncrementalAlterConfigsRequestResourceConfig{Name: "share.auto.offset.reset", Op: set, Value: v("earliest")})
	if r.ErrorCode != 0 || len(recs) != 0 {
		t.Fatalf("validate_only: code %d, %d records", r.ErrorCode, len(recs))
	}
	recs, r = inc(false,
		kmsg.IncrementalAlterConfigsRequestResourceConfig{Name: "share.auto.offset.reset", Op: set, Value: v("earliest")},
		kmsg.IncrementalAlterConfigsRequestResourceConfig{Name: "share.delivery.count.limit", Op: set, Value: v("3")})
	if r.ErrorCode != 0 || len(recs) != 2 {
		t.Fatalf("set: code %d, %d records", r.ErrorCode, len(recs))
	}
	for _, rec := range recs {
		if cr := rec.(*metadata.ConfigRecord); cr.ResourceType != metadata.ConfigResourceGroup || cr.ResourceName != "g" {
			t.Fatalf("record %s", fmtRecord(rec))
		}
	}
	apply(recs)
	recs, r = inc(false, kmsg.IncrementalAlterConfigsRequestResourceConfig{Name: "share.delivery.count.limit", Op: kmsg.IncrementalAlterConfigOpDelete})
	if r.ErrorCode != 0 || len(recs) != 1 || recs[0].(*metadata.ConfigRecord).Value != nil {
		t.Fatalf("delete: code %d, records %v", r.ErrorCode, recs)
	}
	if len(seen) != 1 || seen["share.auto.offset.reset"] != "earliest" {
		t.Fatalf("the policy saw %v, want the whole resulting set", seen)
	}
	apply(recs)
	// The policy's refusal is INVALID_CONFIG with its message.
	_, r = inc(false, kmsg.IncrementalAlterConfigsRequestResourceConfig{Name: "bad.key", Op: set, Value: v("1")})
	if r.ErrorCode != kerr.InvalidConfig.Code || *r.ErrorMessage != "invalid value 1 for configuration bad.key" {
		t.Fatalf("refused: %d %v", r.ErrorCode, *r.ErrorMessage)
	}
	// AlterConfigs replaces the set: the old key is deleted.
	legacy := kmsg.NewPtrAlterConfigsRequest()
	legacy.Resources = []kmsg.AlterConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeGroupConfig, ResourceName: "g",
		Configs: []kmsg.AlterConfigsRequestResourceConfig{{Name: "share.isolation.level", Value: v("read_committed")}}}}
	recs, resp := c.AlterConfigs(im, legacy)
	if resp.Resources[0].ErrorCode != 0 || len(recs) != 2 {
		t.Fatalf("legacy: code %d, %d records", resp.Resources[0].ErrorCode, len(recs))
	}
	apply(recs)
	if got := im.GroupConfigs("g"); len(got) != 1 || got["share.isolation.level"] != "read_committed" {
		t.Fatalf("after the legacy alter: %v", got)
	}
	legacy.Resources[0].ResourceName = ""
	if _, resp = c.AlterConfigs(im, legacy); resp.Resources[0].ErrorCode != kerr.InvalidRequest.Code ||
		*resp.Resources[0].ErrorMessage != "Default group resources are not allowed." {
		t.Fatalf("empty group name: %d %v", resp.Resources[0].ErrorCode, *resp.Resources[0].ErrorMessage)
	}
}

// recordingPolicy keeps the last set it validated.
type recordingPolicy struct {
	testPolicy
	seen *map[string]string
}

func (p recordingPolicy) Validate(res metadata.ConfigResource, cfg map[string]string) error {
	*p.seen = cfg
	return p.testPolicy.Validate(res, cfg)
}
