package api

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Stubs that satisfy a plane's interface for registration only; a call of
// an unstubbed method panics on the nil embedded interface.
type (
	stubDataPlane  struct{ DataPlane }
	stubMarkers    struct{ TxnMarkerWriter }
	stubGroupPlane struct{ GroupPlane }
	stubTxnPlane   struct{ TxnPlane }
	stubTxnOffsets struct{ TxnOffsetCommitter }
	stubQuorum     struct{ leader int32 }
	stubDirectory  struct{ ControllerDirectory }
	stubLogServer  struct{ MetadataLogServer }
	stubBrokerCtrl struct{ BrokerControl }
)

func (q stubQuorum) Leader() int32 { return q.leader }

// DescribeQuorum describes as a leader when this voter leads (leader 1).
func (q stubQuorum) DescribeQuorum(_ context.Context, req *kmsg.DescribeQuorumRequest) (*kmsg.DescribeQuorumResponse, error) {
	if q.leader != 1 {
		return nil, fmt.Errorf("voter 1: %w", ErrNotController)
	}
	resp := kmsg.NewPtrDescribeQuorumResponse()
	resp.Topics = []kmsg.DescribeQuorumResponseTopic{{Topic: metadataTopic, Partitions: []kmsg.DescribeQuorumResponseTopicPartition{{LeaderID: 1}}}}
	return resp, nil
}

func keysOf(r *Registry) []int16 {
	var keys []int16
	for _, v := range r.Advertised() {
		keys = append(keys, v.Key)
	}
	return keys
}

// TestBrokerHandlersServeTheBrokerKeys: with every dependency, the broker
// listener serves the 46 keys of docs/compatibility.md, each at the
// release's whole range.
func TestBrokerHandlersServeTheBrokerKeys(t *testing.T) {
	deps := newFakeController(t, 1).brokerDeps()
	deps.Data = &DataPlaneDeps{Partitions: stubDataPlane{}, Markers: stubMarkers{}}
	deps.Groups = &GroupPlaneDeps{Coordinator: stubGroupPlane{}, TxnOffsets: stubTxnOffsets{}}
	deps.Txns = &TxnPlaneDeps{Coordinator: stubTxnPlane{}}
	r, err := NewRegistry(BrokerRelease(), RegistryInfo{}, BrokerHandlers(deps))
	if err != nil {
		t.Fatal(err)
	}
	want := []int16{0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 35, 36, 37, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 55, 57, 60, 61, 64, 65, 66, 68, 69, 74, 75}
	if got := keysOf(r); !slices.Equal(got, want) {
		t.Fatalf("broker keys %v, want %v", got, want)
	}
	for _, v := range r.Advertised() {
		rel := BrokerRelease().APIs[slices.IndexFunc(BrokerRelease().APIs, func(a VersionRange) bool { return a.Key == v.Key })]
		if v != rel {
			t.Errorf("key %d advertised %+v, Kafka's %+v", v.Key, v, rel)
		}
	}
	if _, err := NewRegistry(BrokerRelease(), RegistryInfo{}, ControllerHandlers(ControllerDeps{Brokers: stubBrokerCtrl{}})); err == nil {
		t.Fatal("the broker release accepted the controller-only keys")
	}
}

// TestControllerHandlersServeTheControllerKeys: with every dependency, a
// CONTROLLER listener serves the admin keys (with the ACL and quota keys
// and AlterUserScramCredentials, as Kafka's ControllerApis; not the
// quota and SCRAM reads), the controller-only keys and Fetch of the
// metadata log (v4-16), and no data or group key.
func TestControllerHandlersServeTheControllerKeys(t *testing.T) {
	f := newFakeController(t, 1)
	r, err := NewRegistry(ControllerListenerRelease(), RegistryInfo{}, ControllerHandlers(ControllerDeps{
		Config: f.cfg, Metadata: f, Admin: f, ProducerIDs: f, LogDirs: f,
		Brokers: stubBrokerCtrl{}, Quorum: stubQuorum{}, MetadataLog: stubLogServer{}, Controllers: stubDirectory{},
		Membership: stubMembership{},
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := []int16{1, 3, 17, 18, 19, 20, 22, 29, 30, 31, 32, 33, 35, 36, 37, 43, 44, 45, 46, 49, 51, 55, 56, 57, 59, 60, 62, 63, 64, 67, 73, 80, 81, 82}
	if got := keysOf(r); !slices.Equal(got, want) {
		t.Fatalf("controller keys %v, want %v", got, want)
	}
	if v, _ := r.Supported(1); v.Min != 4 || v.Max != 16 {
		t.Fatalf("metadata log Fetch %+v, want v4-16", v)
	}
	for _, only := range controllerOnlyKeys() {
		if v, ok := r.Supported(only.Key); !ok || v != only {
			t.Errorf("controller-only key %d: %+v %v, want %+v", only.Key, v, ok, only)
		}
	}
}

// TestControllerDescribeQuorum: on a CONTROLLER listener the leader
// describes and another voter answers NOT_LEADER_OR_FOLLOWER with the
// leader it knows.
func TestControllerDescribeQuorum(t *testing.T) {
	req := kmsg.NewPtrDescribeQuorumRequest()
	req.SetVersion(2)
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = metadataTopic
	rt.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{{Partition: 0}}
	req.Topics = []kmsg.DescribeQuorumRequestTopic{rt}
	serve := func(q QuorumControl) *kmsg.DescribeQuorumResponse {
		return newControllerDescribeQuorumHandler(q).Handle(t.Context(), &Request{Body: req}).body.(*kmsg.DescribeQuorumResponse)
	}
	if resp := serve(stubQuorum{leader: 1}); resp.ErrorCode != 0 || resp.Topics[0].Partitions[0].LeaderID != 1 || resp.Version != 2 {
		t.Fatalf("leader: %+v", resp)
	}
	resp := serve(stubQuorum{leader: 3})
	if p := resp.Topics[0].Partitions[0]; resp.ErrorCode != 0 || p.ErrorCode != kerr.NotLeaderForPartition.Code || p.LeaderID != 3 {
		t.Fatalf("follower: %+v", resp)
	}
}
