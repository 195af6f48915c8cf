package api

import (
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/controller"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
)

// fakeController is the node's control side as the handlers see it
// (MetadataView, AdminController, ProducerIDSource, LogDirSource): it runs
// the real controller against an in-memory image, applying records at once
// (no quorum).
type fakeController struct {
	t       *testing.T
	cfg     *config.Config
	image   *metadata.Image
	ctrl    *controller.Controller
	nextPID int64
	failOps error
	logDirs []LogDirDescription
}

type topicPolicy struct{ cfg *config.Config }

func (p topicPolicy) Validate(res metadata.ConfigResource, configs map[string]string) error {
	if res.Type != metadata.ConfigResourceTopic {
		return fmt.Errorf("only topics here")
	}
	_, err := p.cfg.ResolveTopic(configs)
	return err
}
func (topicPolicy) IsList(metadata.ConfigResourceType, string) bool    { return false }
func (topicPolicy) Default(metadata.ConfigResourceType, string) string { return "" }

func newFakeController(t *testing.T, brokers ...int32) *fakeController {
	cfg := config.Defaults()
	f := &fakeController{t: t, cfg: cfg, image: metadata.EmptyImage()}
	ids := 0
	f.ctrl = controller.New(controller.Options{
		NumPartitions: 1, DefaultReplicationFactor: 1, Configs: topicPolicy{cfg},
		NewTopicID: func() (kafka.UUID, error) { ids++; return kafka.UUID{15: byte(ids)}, nil },
	})
	f.apply(metadata.BootstrapRecords("test-cluster", 20)...)
	for _, id := range brokers {
		f.apply(&metadata.RegisterBrokerRecord{BrokerID: id, BrokerEpoch: 1, Endpoints: []metadata.Endpoint{
			{Name: "PLAINTEXT", Host: "h", Port: 9000 + id},
		}}, &metadata.UnfenceBrokerRecord{BrokerID: id, BrokerEpoch: 1})
	}
	return f
}

func (f *fakeController) apply(recs ...metadata.Record) {
	f.t.Helper()
	d := metadata.NewDelta(f.image)
	for _, r := range recs {
		if err := d.Replay(f.image.Offset()+1, 1, r); err != nil {
			f.t.Fatal(err)
		}
	}
	f.image = d.Apply()
}

func (f *fakeController) Image() *metadata.Image       { return f.image }
func (f *fakeController) LogDirs() []LogDirDescription { return f.logDirs }

// brokerDeps is a broker listener's control side, all of it this fake.
func (f *fakeController) brokerDeps() BrokerDeps {
	return BrokerDeps{Config: f.cfg, Metadata: f, Admin: f, ProducerIDs: f, LogDirs: f}
}

func (f *fakeController) CreateTopics(_ context.Context, req *kmsg.CreateTopicsRequest) (*kmsg.CreateTopicsResponse, error) {
	if f.failOps != nil {
		return nil, f.failOps
	}
	recs, resp := f.ctrl.CreateTopics(f.image, req)
	f.apply(recs...)
	return resp, nil
}

func (f *fakeController) DeleteTopics(_ context.Context, req *kmsg.DeleteTopicsRequest) (*kmsg.DeleteTopicsResponse, error) {
	recs, resp := f.ctrl.DeleteTopics(f.image, req)
	f.apply(recs...)
	return resp, f.failOps
}

func (f *fakeController) CreatePartitions(_ context.Context, req *kmsg.CreatePartitionsRequest) (*kmsg.CreatePartitionsResponse, error) {
	recs, resp := f.ctrl.CreatePartitions(f.image, req)
	f.apply(recs...)
	return resp, f.failOps
}

func (f *fakeController) AlterConfigs(_ context.Context, req *kmsg.AlterConfigsRequest) (*kmsg.AlterConfigsResponse, error) {
	recs, resp := f.ctrl.AlterConfigs(f.image, req)
	f.apply(recs...)
	return resp, f.failOps
}

func (f *fakeController) IncrementalAlterConfigs(_ context.Context, req *kmsg.IncrementalAlterConfigsRequest) (*kmsg.IncrementalAlterConfigsResponse, error) {
	recs, resp := f.ctrl.IncrementalAlterConfigs(f.image, req)
	f.apply(recs...)
	return resp, f.failOps
}

func (f *fakeController) ElectLeaders(_ context.Context, req *kmsg.ElectLeadersRequest) (*kmsg.ElectLeadersResponse, error) {
	recs, resp := f.ctrl.ElectLeaders(f.image, req)
	f.apply(recs...)
	return resp, f.failOps
}

func (f *fakeController) AlterPartitionReassignments(_ context.Context, req *kmsg.AlterPartitionAssignmentsRequest) (*kmsg.AlterPartitionAssignmentsResponse, error) {
	recs, resp := f.ctrl.AlterPartitionReassignments(f.image, req)
	f.apply(recs...)
	return resp, f.failOps
}

func (f *fakeController) ListPartitionReassignments(_ context.Context, req *kmsg.ListPartitionReassignmentsRequest) (*kmsg.ListPartitionReassignmentsResponse, error) {
	return f.ctrl.ListPartitionReassignments(f.image, req), f.failOps
}

// DescribeQuorum fails: the fake has no quorum.
func (f *fakeController) DescribeQuorum(context.Context, *kmsg.DescribeQuorumRequest) (*kmsg.DescribeQuorumResponse, error) {
	return nil, fmt.Errorf("fake controller: %w", ErrNotController)
}

func (f *fakeController) NextProducerID(context.Context) (int64, error) {
	f.nextPID++
	return f.nextPID, f.failOps
}

func (f *fakeController) createTopic(name string, partitions int32) {
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, partitions, 1
	req.Topics = append(req.Topics, rt)
	resp, _ := f.CreateTopics(context.Background(), req)
	if resp.Topics[0].ErrorCode != 0 {
		f.t.Fatalf("create %s: %v", name, kerr.ErrorForCode(resp.Topics[0].ErrorCode))
	}
}

func metadataRequest(version int16, auto bool, topics ...string) *kmsg.MetadataRequest {
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(version)
	req.AllowAutoTopicCreation = auto
	if topics != nil {
		req.Topics = []kmsg.MetadataRequestTopic{}
	}
	for _, t := range topics {
		req.Topics = append(req.Topics, kmsg.MetadataRequestTopic{Topic: kmsg.StringPtr(t)})
	}
	return req
}

func TestMetadataTopicsBrokersAndErrors(t *testing.T) {
	f := newFakeController(t, 1, 2)
	f.createTopic("a", 2)
	ctx := context.Background()

	resp := metadataResponse(ctx, f.cfg, f, f, "PLAINTEXT", metadataRequest(12, false), allowAllMetadata)
	if len(resp.Brokers) != 2 || resp.ControllerID != 1 || *resp.ClusterID != "test-cluster" {
		t.Fatalf("brokers %+v controller %d cluster %v", resp.Brokers, resp.ControllerID, resp.ClusterID)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 2 || resp.Topics[0].AuthorizedOperations != authorizedOperationsOmitted {
		t.Fatalf("all topics: %+v", resp.Topics)
	}
	if resp := metadataResponse(ctx, f.cfg, f, f, "OTHER", metadataRequest(12, false, "a"), allowAllMetadata); len(resp.Brokers) != 0 ||
		resp.Topics[0].Partitions[0].ErrorCode != kerr.LeaderNotAvailable.Code || len(resp.Topics[0].Partitions[0].OfflineReplicas) != 1 {
		t.Fatalf("a listener no broker has: %+v", resp)
	}

	resp = metadataResponse(ctx, f.cfg, f, f, "PLAINTEXT", metadataRequest(12, false, "missing", "bad/name", "a"), allowAllMetadata)
	want := []int16{kerr.UnknownTopicOrPartition.Code, kerr.InvalidTopicException.Code, 0}
	for i, w := range want {
		if resp.Topics[i].ErrorCode != w {
			t.Errorf("topic %s: error %d, want %d", *resp.Topics[i].Topic, resp.Topics[i].ErrorCode, w)
		}
	}

	byID := kmsg.NewPtrMetadataRequest()
	byID.SetVersion(12)
	id, _ := f.image.Topic("a")
	byID.Topics = []kmsg.MetadataRequestTopic{{TopicID: id.ID}, {TopicID: [16]byte{1}}}
	resp = metadataResponse(ctx, f.cfg, f, f, "PLAINTEXT", byID, allowAllMetadata)
	if *resp.Topics[0].Topic != "a" || resp.Topics[1].ErrorCode != kerr.UnknownTopicID.Code {
		t.Fatalf("by id: %+v", resp.Topics)
	}
	// The Java client asks by id with the name left "" (not null).
	empty := ""
	byID.Topics = []kmsg.MetadataRequestTopic{{Topic: &empty, TopicID: id.ID}}
	resp = metadataResponse(ctx, f.cfg, f, f, "PLAINTEXT", byID, allowAllMetadata)
	if resp.Topics[0].ErrorCode != 0 || *resp.Topics[0].Topic != "a" {
		t.Fatalf("by id with an empty name: %+v", resp.Topics)
	}
}

func TestMetadataAutoCreation(t *testing.T) {
	f := newFakeController(t, 1)
	ctx := context.Background()
	// v4+ asks; below v4 auto-creation is implied.
	resp := metadataResponse(ctx, f.cfg, f, f, "PLAINTEXT", metadataRequest(12, false, "x"), allowAllMetadata)
	if resp.Topics[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("not allowed: %+v", resp.Topics[0])
	}
	resp = metadataResponse(ctx, f.cfg, f, f, "PLAINTEXT", metadataRequest(12, true, "x", "__consumer_offsets"), allowAllMetadata)
	if _, created := f.image.Topic("x"); !created || resp.Topics[0].ErrorCode != kerr.UnknownTopicOrPartition.Code ||
		resp.Topics[1].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("auto-created (Kafka 4.4 answers UNKNOWN_TOPIC_OR_PARTITION while it creates): %+v", resp.Topics)
	}
	if _, created := f.image.Topic("__consumer_offsets"); created {
		t.Fatal("__consumer_offsets auto-created from Metadata")
	}
	resp = metadataResponse(ctx, f.cfg, f, f, "PLAINTEXT", metadataRequest(3, false, "y"), allowAllMetadata)
	if _, created := f.image.Topic("y"); !created || resp.Topics[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("v3 auto-creation: %+v", resp.Topics[0])
	}
	resp = metadataResponse(ctx, f.cfg, f, f, "PLAINTEXT", metadataRequest(12, true, "x"), allowAllMetadata)
	if resp.Topics[0].ErrorCode != 0 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("after auto-creation: %+v", resp.Topics[0])
	}
}

func TestCreateTopicsConfigsAndErrors(t *testing.T) {
	f := newFakeController(t, 1)
	req := kmsg.NewPtrCreateTopicsRequest()
	req.SetVersion(7)
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "t", -1, -1
	rt.Configs = []kmsg.CreateTopicsRequestTopicConfig{{Name: "cleanup.policy", Value: kmsg.StringPtr("compact")}}
	req.Topics = append(req.Topics, rt)
	resp := createTopics(context.Background(), f.cfg, f, req)
	got := resp.Topics[0]
	if got.ErrorCode != 0 || got.NumPartitions != 1 || got.TopicID == [16]byte{} {
		t.Fatalf("create: %+v", got)
	}
	found := false
	for _, c := range got.Configs {
		if c.Name == "cleanup.policy" && *c.Value == "compact" && c.Source == int8(kmsg.ConfigSourceDynamicTopicConfig) {
			found = true
		}
	}
	if !found || len(got.Configs) < 20 {
		t.Fatalf("v5+ configs missing the override or the defaults (%d entries)", len(got.Configs))
	}

	f.failOps = context.DeadlineExceeded
	resp = createTopics(context.Background(), f.cfg, f, req)
	if resp.Topics[0].ErrorCode != kerr.RequestTimedOut.Code {
		t.Fatalf("timeout: %+v", resp.Topics[0])
	}
}

func TestDescribeConfigsResources(t *testing.T) {
	f := newFakeController(t, 1)
	f.createTopic("t", 1)
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.SetVersion(4)
	req.IncludeSynonyms, req.IncludeDocumentation = true, true
	add := func(typ kmsg.ConfigResourceType, name string) {
		req.Resources = append(req.Resources, kmsg.DescribeConfigsRequestResource{ResourceType: typ, ResourceName: name})
	}
	add(kmsg.ConfigResourceTypeTopic, "t")
	add(kmsg.ConfigResourceTypeTopic, "nope")
	add(kmsg.ConfigResourceTypeBroker, "1")
	add(kmsg.ConfigResourceTypeBroker, "2")
	add(kmsg.ConfigResourceTypeBrokerLogger, "1")
	resp := describeConfigs(f.cfg, f, nil, req)
	codes := []int16{0, kerr.UnknownTopicOrPartition.Code, 0, kerr.InvalidRequest.Code, kerr.InvalidRequest.Code}
	for i, c := range codes {
		if resp.Resources[i].ErrorCode != c {
			t.Errorf("resource %d: error %d, want %d", i, resp.Resources[i].ErrorCode, c)
		}
	}
	if len(resp.Resources[0].Configs) < 20 || len(resp.Resources[2].Configs) < 100 {
		t.Fatalf("topic %d entries, broker %d entries", len(resp.Resources[0].Configs), len(resp.Resources[2].Configs))
	}
	var withDoc, withSyn bool
	for _, c := range resp.Resources[0].Configs {
		withDoc = withDoc || c.Documentation != nil
		withSyn = withSyn || len(c.ConfigSynonyms) > 0
	}
	if !withDoc || !withSyn {
		t.Fatal("documentation or synonyms missing though asked for")
	}
}

func TestInitProducerID(t *testing.T) {
	f := newFakeController(t, 1)
	ctx := context.Background()
	req := kmsg.NewPtrInitProducerIDRequest()
	req.SetVersion(5)
	req.ProducerID, req.ProducerEpoch = -1, -1
	first := initProducerID(ctx, f, req)
	req.ProducerID, req.ProducerEpoch = first.ProducerID, 3 // KIP-360 bump
	bumped := initProducerID(ctx, f, req)
	if first.ErrorCode != 0 || bumped.ErrorCode != 0 || bumped.ProducerID == first.ProducerID || bumped.ProducerEpoch != 0 {
		t.Fatalf("first %+v bumped %+v", first, bumped)
	}
	req.ProducerID, req.ProducerEpoch = 5, -1
	if r := initProducerID(ctx, f, req); r.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("id without epoch: %+v", r)
	}
	req.ProducerID, req.ProducerEpoch, req.TransactionalID = -1, -1, kmsg.StringPtr("txn")
	if r := initProducerID(ctx, f, req); r.ErrorCode != kerr.CoordinatorNotAvailable.Code || r.ProducerID != -1 {
		t.Fatalf("transactional: %+v", r)
	}
}

func TestDescribeClusterAndLogDirs(t *testing.T) {
	f := newFakeController(t, 1, 2)
	req := kmsg.NewPtrDescribeClusterRequest()
	req.SetVersion(2)
	req.EndpointType = endpointTypeBrokers
	resp := describeCluster(f.cfg.NodeID(), f, "PLAINTEXT", req)
	if resp.ErrorCode != 0 || len(resp.Brokers) != 2 || resp.ClusterID != "test-cluster" || resp.ControllerID != 1 {
		t.Fatalf("describe cluster: %+v", resp)
	}
	req.EndpointType = endpointTypeControllers
	if resp := describeCluster(f.cfg.NodeID(), f, "PLAINTEXT", req); resp.ErrorCode != kerr.UnsupportedEndpointType.Code {
		t.Fatalf("controllers endpoint: %+v", resp)
	}

	dirs := []LogDirDescription{
		{Path: "/d1", Partitions: []LogDirPartition{{Topic: "a", Partition: 0, Size: 10}, {Topic: "a", Partition: 1, Size: 20}, {Topic: "b", Partition: 0, Size: 5}}},
		{Path: "/d2", Err: fmt.Errorf("offline")},
	}
	ld := kmsg.NewPtrDescribeLogDirsRequest()
	ld.SetVersion(4)
	all := describeLogDirs(dirs, ld)
	if len(all.Dirs) != 2 || len(all.Dirs[0].Topics) != 2 || all.Dirs[1].ErrorCode != kerr.KafkaStorageError.Code {
		t.Fatalf("all log dirs: %+v", all)
	}
	ld.Topics = []kmsg.DescribeLogDirsRequestTopic{{Topic: "a", Partitions: []int32{1}}}
	some := describeLogDirs(dirs, ld)
	if len(some.Dirs[0].Topics) != 1 || len(some.Dirs[0].Topics[0].Partitions) != 1 || some.Dirs[0].Topics[0].Partitions[0].Size != 20 {
		t.Fatalf("filtered log dirs: %+v", some.Dirs[0])
	}
}

func TestDeleteTopicsDisabled(t *testing.T) {
	f := newFakeController(t, 1)
	f.createTopic("t", 1)
	cfg, err := config.Parse("", map[string]string{"delete.topic.enable": "false"})
	if err != nil {
		t.Fatal(err)
	}
	f.cfg = cfg
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.SetVersion(6)
	req.Topics = []kmsg.DeleteTopicsRequestTopic{{Topic: kmsg.StringPtr("t")}}
	resp := deleteTopics(context.Background(), f.cfg, f, req)
	if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != kerr.TopicDeletionDisabled.Code {
		t.Fatalf("deletion disabled: %+v", resp.Topics)
	}
	if _, ok := f.image.Topic("t"); !ok {
		t.Fatal("topic deleted though deletion is disabled")
	}
}

func TestControllerErrorCode(t *testing.T) {
	cases := []struct {
		err  error
		want int16
	}{
		{fmt.Errorf("wait: %w", context.DeadlineExceeded), kerr.RequestTimedOut.Code},
		{fmt.Errorf("propose: %w", ErrNotController), kerr.NotController.Code},
		{fmt.Errorf("alloc: %w", kerr.CoordinatorLoadInProgress), kerr.CoordinatorLoadInProgress.Code},
		{fmt.Errorf("disk on fire"), kerr.UnknownServerError.Code},
	}
	for _, c := range cases {
		if got := ControllerErrorCode(c.err); got != c.want {
			t.Errorf("%v: code %d, want %d", c.err, got, c.want)
		}
	}
}
