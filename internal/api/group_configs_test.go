package api

import (
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/controller"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/protocol"
)

// groupPolicy is topicPolicy plus the group config validation the node's
// policy does.
type groupPolicy struct{ topicPolicy }

func (p groupPolicy) Validate(res metadata.ConfigResource, configs map[string]string) error {
	if res.Type == metadata.ConfigResourceGroup {
		return p.cfg.ValidateGroupConfigs(configs)
	}
	return p.topicPolicy.Validate(res, configs)
}

func newGroupConfigFake(t *testing.T) *fakeController {
	f := newFakeController(t, 1)
	f.ctrl = controller.New(controller.Options{Configs: groupPolicy{topicPolicy{f.cfg}}})
	return f
}

func groupHandle(h Handler, key, version int16, body kmsg.Request) kmsg.Response {
	id := "test"
	req := &Request{Header: protocol.RequestHeader{APIKey: key, APIVersion: version, ClientID: &id, Flexible: true}, Body: body,
		Conn: &ConnState{Listener: "PLAINTEXT", Principal: quotaConn().Principal}}
	return h.Handle(context.Background(), req).Body()
}

func incGroup(f *fakeController, group string, cfgs ...kmsg.IncrementalAlterConfigsRequestResourceConfig) kmsg.IncrementalAlterConfigsResponseResource {
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	req.SetVersion(1)
	req.Resources = []kmsg.IncrementalAlterConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeGroupConfig, ResourceName: group, Configs: cfgs}}
	resp := groupHandle(newIncrementalAlterConfigsHandler(f, f.cfg, nil), 44, 1, req).(*kmsg.IncrementalAlterConfigsResponse)
	return resp.Resources[0]
}

func set(k, v string) kmsg.IncrementalAlterConfigsRequestResourceConfig {
	return kmsg.IncrementalAlterConfigsRequestResourceConfig{Name: k, Op: kmsg.IncrementalAlterConfigOpSet, Value: &v}
}

func describeGroup(f *fakeController, group string, names ...string) kmsg.DescribeConfigsResponseResource {
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.SetVersion(4)
	req.IncludeSynonyms = true
	r := kmsg.DescribeConfigsRequestResource{ResourceType: kmsg.ConfigResourceTypeGroupConfig, ResourceName: group}
	if len(names) > 0 {
		r.ConfigNames = names
	}
	req.Resources = []kmsg.DescribeConfigsRequestResource{r}
	resp := groupHandle(newDescribeConfigsHandler(f.cfg, f, nil), 32, 4, req).(*kmsg.DescribeConfigsResponse)
	return resp.Resources[0]
}

func entryLine(c kmsg.DescribeConfigsResponseResourceConfig) string {
	s := fmt.Sprintf("%s=%s %v ro=%v", c.Name, deref(c.Value), c.Source, c.ReadOnly)
	for _, syn := range c.ConfigSynonyms {
		s += fmt.Sprintf(" [%s=%s %v]", syn.Name, deref(syn.Value), syn.Source)
	}
	return s
}

func deref(s *string) string {
	if s == nil {
		return "<null>"
	}
	return *s
}

// The answers below are Kafka 4.4.0's to the same requests (bench/kafka-ref,
// probed with kmsg requests).
func TestGroupConfigsAlterAndDescribe(t *testing.T) {
	f := newGroupConfigFake(t)
	// A group that does not exist describes every non-internal key.
	d := describeGroup(f, "g1")
	if d.ErrorCode != 0 || len(d.Configs) != 21 {
		t.Fatalf("describe of an unconfigured group: code %d, %d entries, want 21", d.ErrorCode, len(d.Configs))
	}
	if r := incGroup(f, "g1", set("share.auto.offset.reset", "earliest")); r.ErrorCode != 0 {
		t.Fatalf("SET share.auto.offset.reset: %d %s", r.ErrorCode, deref(r.ErrorMessage))
	}
	d = describeGroup(f, "g1", "share.auto.offset.reset", "consumer.session.timeout.ms", "no.such.key")
	want := []string{
		"consumer.session.timeout.ms=45000 DEFAULT_CONFIG ro=false [group.consumer.session.timeout.ms=45000 DEFAULT_CONFIG]",
		"share.auto.offset.reset=earliest GROUP_CONFIG ro=false [share.auto.offset.reset=earliest GROUP_CONFIG] [share.auto.offset.reset=latest DEFAULT_CONFIG]",
	}
	if len(d.Configs) != len(want) {
		t.Fatalf("%d entries, want %d", len(d.Configs), len(want))
	}
	for i, c := range d.Configs {
		if got := entryLine(c); got != want[i] {
			t.Errorf("entry %d:\n got %s\nwant %s", i, got, want[i])
		}
	}
	// An internal key is listed once the group sets it; a boolean is
	// rendered as Kafka parses it.
	if r := incGroup(f, "g1", set("consumer.assignor.offload.enable", "FALSE")); r.ErrorCode != 0 {
		t.Fatalf("SET internal key: %d %s", r.ErrorCode, deref(r.ErrorMessage))
	}
	d = describeGroup(f, "g1")
	if len(d.Configs) != 22 || entryLine(d.Configs[1]) !=
		"consumer.assignor.offload.enable=false GROUP_CONFIG ro=false [consumer.assignor.offload.enable=false GROUP_CONFIG] [group.consumer.assignor.offload.enable=true DEFAULT_CONFIG]" {
		t.Fatalf("%d entries, second %s", len(d.Configs), entryLine(d.Configs[1]))
	}
	// DELETE goes back to the broker's value.
	del := kmsg.IncrementalAlterConfigsRequestResourceConfig{Name: "share.auto.offset.reset", Op: kmsg.IncrementalAlterConfigOpDelete}
	if r := incGroup(f, "g1", del); r.ErrorCode != 0 {
		t.Fatal(r.ErrorCode)
	}
	if got := f.image.GroupConfigs("g1"); len(got) != 1 || got["consumer.assignor.offload.enable"] != "FALSE" {
		t.Fatalf("stored %v", got)
	}
}

func TestGroupConfigsRefusals(t *testing.T) {
	f := newGroupConfigFake(t)
	for _, tc := range []struct {
		group string
		cfg   kmsg.IncrementalAlterConfigsRequestResourceConfig
		code  *kerr.Error
		msg   string
	}{
		{"g", set("unknown.key", "1"), kerr.InvalidConfig, "Unknown group config name: unknown.key"},
		{"g", set("share.record.lock.duration.ms", "14999"), kerr.InvalidConfig, "share.record.lock.duration.ms must be in the range 15000 to 60000 inclusive."},
		{"g", set("share.auto.offset.reset", "none"), kerr.InvalidConfig, "Invalid value none for configuration share.auto.offset.reset: Invalid value `none` for configuration " +
			"share.auto.offset.reset. The value must be either 'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'."},
		{"", set("share.auto.offset.reset", "earliest"), kerr.InvalidRequest, "Default group resources are not allowed."},
		{"g", kmsg.IncrementalAlterConfigsRequestResourceConfig{Name: "share.auto.offset.reset", Op: kmsg.IncrementalAlterConfigOpSet}, kerr.InvalidRequest,
			"Null value not supported for : share.auto.offset.reset"},
		{"g", kmsg.IncrementalAlterConfigsRequestResourceConfig{Name: "streams.rack.aware.assignment.tags", Op: kmsg.IncrementalAlterConfigOpAppend, Value: kmsg.StringPtr("a")},
			kerr.InvalidConfig, "Can't APPEND to key streams.rack.aware.assignment.tags because its type is not LIST."},
		{"g", kmsg.IncrementalAlterConfigsRequestResourceConfig{Name: "share.auto.offset.reset", Op: kmsg.IncrementalAlterConfigOpSubtract, Value: kmsg.StringPtr("a")},
			kerr.InvalidConfig, "Can't SUBTRACT to key share.auto.offset.reset because its type is not LIST."},
	} {
		r := incGroup(f, tc.group, tc.cfg)
		if r.ErrorCode != tc.code.Code || deref(r.ErrorMessage) != tc.msg {
			t.Errorf("%s on %q: %d %q, want %d %q", tc.cfg.Name, tc.group, r.ErrorCode, deref(r.ErrorMessage), tc.code.Code, tc.msg)
		}
	}
	if got := f.image.ConfiguredGroups(); len(got) != 0 {
		t.Fatalf("refused changes stored: %v", got)
	}
	if d := describeGroup(f, ""); d.ErrorCode != kerr.InvalidRequest.Code || deref(d.ErrorMessage) != "Group name must not be empty" {
		t.Fatalf("describe of the empty name: %d %q", d.ErrorCode, deref(d.ErrorMessage))
	}
}

// Legacy AlterConfigs replaces a group's whole set, as Kafka 4.4 allows.
func TestGroupConfigsLegacyAlter(t *testing.T) {
	f := newGroupConfigFake(t)
	incGroup(f, "g", set("share.delivery.count.limit", "3"))
	req := kmsg.NewPtrAlterConfigsRequest()
	req.SetVersion(2)
	req.Resources = []kmsg.AlterConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeGroupConfig, ResourceName: "g",
		Configs: []kmsg.AlterConfigsRequestResourceConfig{{Name: "share.isolation.level", Value: kmsg.StringPtr("read_committed")}}}}
	resp := groupHandle(newAlterConfigsHandler(f), 33, 2, req).(*kmsg.AlterConfigsResponse)
	if resp.Resources[0].ErrorCode != 0 {
		t.Fatalf("legacy alter: %d %s", resp.Resources[0].ErrorCode, deref(resp.Resources[0].ErrorMessage))
	}
	if got := f.image.GroupConfigs("g"); len(got) != 1 || got["share.isolation.level"] != "read_committed" {
		t.Fatalf("stored %v, want only share.isolation.level", got)
	}
	req.Resources[0].Configs[0].Name = "nope"
	resp = groupHandle(newAlterConfigsHandler(f), 33, 2, req).(*kmsg.AlterConfigsResponse)
	if r := resp.Resources[0]; r.ErrorCode != kerr.InvalidConfig.Code || deref(r.ErrorMessage) != "Unknown group config name: nope" {
		t.Fatalf("legacy unknown key: %d %q", r.ErrorCode, deref(r.ErrorMessage))
	}
}

// A GROUP resource needs DESCRIBE_CONFIGS, ALTER_CONFIGS on the group
// (GROUP_AUTHORIZATION_FAILED otherwise), as Kafka's ConfigHelper and
// ControllerApis.authorizeAlterResource.
func TestGroupConfigsAuthorization(t *testing.T) {
	x := newAuthzFixture(t)
	x.f.ctrl = controller.New(controller.Options{Configs: groupPolicy{topicPolicy{x.f.cfg}}})
	x.allow("alice", metadata.ACLOpDescribeConfigs, metadata.ACLResourceGroup, "mine", false)
	x.allow("alice", metadata.ACLOpAlterConfigs, metadata.ACLResourceGroup, "mine", false)
	for _, tc := range []struct {
		group string
		code  int16
	}{{"mine", 0}, {"theirs", kerr.GroupAuthorizationFailed.Code}} {
		inc := kmsg.NewPtrIncrementalAlterConfigsRequest()
		inc.SetVersion(1)
		v := "earliest"
		inc.Resources = []kmsg.IncrementalAlterConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeGroupConfig, ResourceName: tc.group,
			Configs: []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: "share.auto.offset.reset", Op: kmsg.IncrementalAlterConfigOpSet, Value: &v}}}}
		if r := as[*kmsg.IncrementalAlterConfigsResponse](x, "alice", inc).Resources[0]; r.ErrorCode != tc.code {
			t.Errorf("alter %s: code %d, want %d", tc.group, r.ErrorCode, tc.code)
		}
		desc := kmsg.NewPtrDescribeConfigsRequest()
		desc.SetVersion(4)
		desc.Resources = []kmsg.DescribeConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeGroupConfig, ResourceName: tc.group}}
		r := as[*kmsg.DescribeConfigsResponse](x, "alice", desc).Resources[0]
		if r.ErrorCode != tc.code || (tc.code == 0) != (len(r.Configs) > 0) {
			t.Errorf("describe %s: code %d with %d configs, want %d", tc.group, r.ErrorCode, len(r.Configs), tc.code)
		}
	}
	if got := x.f.image.ConfiguredGroups(); len(got) != 1 || got[0] != "mine" {
		t.Fatalf("configured groups %v, want [mine]", got)
	}
}
