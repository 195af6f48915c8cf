package server

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/api"
	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/fetchwire"
)

// counted returns the non-zero error counts of a by Kafka's error name.
func counted(a *apiMetrics) map[string]uint64 {
	got := map[string]uint64{}
	for slot := range a.errors {
		if n := a.errors[slot].Load(); n > 0 {
			got[errorName(slot)] = n
		}
	}
	return got
}

func checkCounts(t *testing.T, what string, resp kmsg.Response, want map[string]uint64) {
	t.Helper()
	a := newAPIMetrics("test", 20)
	a.countErrors(api.Reply(resp))
	got := counted(a)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: error counts %v, want %v", what, got, want)
	}
}

func TestErrorCountsFollowKafkasErrorCounts(t *testing.T) {
	md := kmsg.NewPtrMetadataResponse()
	md.Brokers = make([]kmsg.MetadataResponseBroker, 3) // no codes in brokers
	md.Topics = []kmsg.MetadataResponseTopic{
		{ErrorCode: kerr.UnknownTopicOrPartition.Code},
		{Partitions: []kmsg.MetadataResponseTopicPartition{{}, {ErrorCode: kerr.LeaderNotAvailable.Code}}},
	}
	checkCounts(t, "Metadata", md, map[string]uint64{"NONE": 2, "UNKNOWN_TOPIC_OR_PARTITION": 1, "LEADER_NOT_AVAILABLE": 1})

	// OffsetFetch v8+ answers per group: the top-level code is not counted.
	of := kmsg.NewPtrOffsetFetchResponse()
	of.Groups = []kmsg.OffsetFetchResponseGroup{{ErrorCode: kerr.GroupAuthorizationFailed.Code},
		{Topics: []kmsg.OffsetFetchResponseGroupTopic{{Partitions: []kmsg.OffsetFetchResponseGroupTopicPartition{{}, {}}}}}}
	checkCounts(t, "OffsetFetch v8", of, map[string]uint64{"GROUP_AUTHORIZATION_FAILED": 1, "NONE": 3})
	// Before v8 the top-level code and the partitions'.
	of = kmsg.NewPtrOffsetFetchResponse()
	of.ErrorCode = kerr.NotCoordinator.Code
	of.Topics = []kmsg.OffsetFetchResponseTopic{{Partitions: []kmsg.OffsetFetchResponseTopicPartition{{}}}}
	checkCounts(t, "OffsetFetch v7", of, map[string]uint64{"NOT_COORDINATOR": 1, "NONE": 1})

	fc := kmsg.NewPtrFindCoordinatorResponse()
	fc.Coordinators = []kmsg.FindCoordinatorResponseCoordinator{{}, {ErrorCode: kerr.CoordinatorNotAvailable.Code}}
	checkCounts(t, "FindCoordinator v4", fc, map[string]uint64{"NONE": 1, "COORDINATOR_NOT_AVAILABLE": 1})

	jg := kmsg.NewPtrJoinGroupResponse()
	jg.ErrorCode = kerr.NotLeaderForPartition.Code
	checkCounts(t, "code 6", jg, map[string]uint64{"NOT_LEADER_OR_FOLLOWER": 1})

	unknown := kmsg.NewPtrJoinGroupResponse()
	unknown.ErrorCode = 30000
	checkCounts(t, "an unknown code", unknown, map[string]uint64{"UNKNOWN_SERVER_ERROR": 1})
}

func produceResponse(partitions int) *kmsg.ProduceResponse {
	resp := kmsg.NewPtrProduceResponse()
	topic := kmsg.NewProduceResponseTopic()
	for p := range partitions {
		part := kmsg.NewProduceResponseTopicPartition()
		part.Partition = int32(p)
		topic.Partitions = append(topic.Partitions, part)
	}
	resp.Topics = append(resp.Topics, topic)
	return resp
}

func fetchStream(b *testing.B, partitions int) *fetchwire.Encoded {
	parts := make([]fetchwire.Partition, partitions)
	for p := range parts {
		parts[p].Partition = int32(p)
	}
	enc, err := fetchwire.Encode(&fetchwire.Response{Topics: []fetchwire.Topic{{Name: "t", Partitions: parts}}}, 12)
	if err != nil {
		b.Fatal(err)
	}
	return enc
}

// BenchmarkErrorCounts is the cost of counting a response's error codes:
// go test -run '^$' -bench ErrorCounts -benchmem ./internal/server/
func BenchmarkErrorCounts(b *testing.B) {
	for _, n := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("Produce/partitions=%d", n), func(b *testing.B) {
			a, resp := newAPIMetrics("Produce", 13), api.Reply(produceResponse(n))
			b.ReportAllocs()
			for b.Loop() {
				a.countErrors(resp)
			}
		})
		b.Run(fmt.Sprintf("FetchStream/partitions=%d", n), func(b *testing.B) {
			a, resp := newAPIMetrics("Fetch", 18), api.Stream(fetchStream(b, n))
			b.ReportAllocs()
			for b.Loop() {
				a.countErrors(resp)
			}
		})
	}
}

// BenchmarkRecordRequest is the whole of a request's metric recording
// (requests, errors, seven time histograms and the size histogram; a Fetch
// twice, under Fetch and FetchConsumer):
// go test -run '^$' -bench RecordRequest -benchmem ./internal/server/
func BenchmarkRecordRequest(b *testing.B) {
	now := time.Unix(1_700_000_000, 0)
	timing := requestTiming{clk: clock.Real{}, arrived: now, started: now.Add(20 * time.Microsecond),
		handled: now.Add(300 * time.Microsecond), dequeued: now.Add(310 * time.Microsecond), sent: now.Add(400 * time.Microsecond),
		served: true, bodyBytes: 1 << 14}
	for _, c := range []struct {
		name string
		key  int16
		resp api.Response
	}{
		{"Produce/partitions=1", 0, api.Reply(produceResponse(1))},
		{"Produce/partitions=10", 0, api.Reply(produceResponse(10))},
		{"Fetch/partitions=10", 1, api.Stream(fetchStream(b, 10))},
	} {
		b.Run(c.name, func(b *testing.B) {
			m := newRequestMetrics()
			t := timing
			t.apiKey, t.version = c.key, 9
			b.ReportAllocs()
			for b.Loop() {
				m.record(&t, c.resp)
			}
		})
	}
}

func TestErrorCountsFollowKafkasExceptions(t *testing.T) {
	apt := kmsg.NewPtrAddPartitionsToTxnResponse()
	apt.ErrorCode = kerr.InvalidTxnState.Code // not counted: v3- answers per partition
	apt.Topics = []kmsg.AddPartitionsToTxnResponseTopic{{Partitions: []kmsg.AddPartitionsToTxnResponseTopicPartition{{}}}}
	checkCounts(t, "AddPartitionsToTxn v3", apt, map[string]uint64{"NONE": 1})

	da := kmsg.NewPtrDeleteACLsResponse()
	da.Results = []kmsg.DeleteACLsResponseResult{{MatchingACLs: []kmsg.DeleteACLsResponseResultMatchingACL{{ErrorCode: kerr.SecurityDisabled.Code}}}}
	checkCounts(t, "DeleteAcls", da, map[string]uint64{"NONE": 1})

	usc := kmsg.NewPtrDescribeUserSCRAMCredentialsResponse()
	usc.ErrorCode = kerr.ClusterAuthorizationFailed.Code // not counted
	usc.Results = []kmsg.DescribeUserSCRAMCredentialsResponseResult{{ErrorCode: kerr.ResourceNotFound.Code}}
	checkCounts(t, "DescribeUserScramCredentials", usc, map[string]uint64{"RESOURCE_NOT_FOUND": 1})
}
