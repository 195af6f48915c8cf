package api

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// stubSnapshots is a MetadataLogServer that only serves snapshots.
type stubSnapshots struct {
	MetadataLogServer
	calls int
	resp  *kmsg.FetchSnapshotResponse
	err   error
}

func (s *stubSnapshots) FetchSnapshot(context.Context, *kmsg.FetchSnapshotRequest) (*kmsg.FetchSnapshotResponse, error) {
	s.calls++
	return s.resp, s.err
}

func fetchSnapshotRequest(version int16, parts ...kmsg.FetchSnapshotRequestTopic) *kmsg.FetchSnapshotRequest {
	req := kmsg.NewPtrFetchSnapshotRequest()
	req.Version = version
	req.Topics = parts
	return req
}

func snapshotTopic(name string, partitions ...int32) kmsg.FetchSnapshotRequestTopic {
	t := kmsg.NewFetchSnapshotRequestTopic()
	t.Topic = name
	for _, p := range partitions {
		rp := kmsg.NewFetchSnapshotRequestTopicPartition()
		rp.Partition = p
		t.Partitions = append(t.Partitions, rp)
	}
	return t
}

func TestFetchSnapshotHandlerChecksTheShape(t *testing.T) {
	s := &stubSnapshots{}
	h := newFetchSnapshotHandler(s)
	serve := func(req *kmsg.FetchSnapshotRequest) *kmsg.FetchSnapshotResponse {
		return h.Handle(t.Context(), &Request{Body: req}).body.(*kmsg.FetchSnapshotResponse)
	}
	for name, req := range map[string]*kmsg.FetchSnapshotRequest{
		"no topic":       fetchSnapshotRequest(1),
		"two partitions": fetchSnapshotRequest(1, snapshotTopic(metadataTopic, 0, 1)),
		"two topics":     fetchSnapshotRequest(1, snapshotTopic(metadataTopic, 0), snapshotTopic("t", 0)),
	} {
		if resp := serve(req); resp.ErrorCode != kerr.InvalidRequest.Code {
			t.Errorf("%s: error %d, want INVALID_REQUEST", name, resp.ErrorCode)
		}
	}
	for name, req := range map[string]*kmsg.FetchSnapshotRequest{
		"other topic":     fetchSnapshotRequest(0, snapshotTopic("orders", 0)),
		"other partition": fetchSnapshotRequest(0, snapshotTopic(metadataTopic, 3)),
	} {
		resp := serve(req)
		if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 ||
			resp.Topics[0].Partitions[0].ErrorCode != kerr.UnknownTopicOrPartition.Code || resp.Version != 0 {
			t.Errorf("%s: %+v, want UNKNOWN_TOPIC_OR_PARTITION on the partition", name, resp)
		}
	}
	if s.calls != 0 {
		t.Fatalf("the server was asked %d times for malformed requests", s.calls)
	}
}

func TestFetchSnapshotHandlerPassesThrough(t *testing.T) {
	ok := kmsg.NewPtrFetchSnapshotResponse()
	ok.Topics = []kmsg.FetchSnapshotResponseTopic{{Topic: metadataTopic}}
	s := &stubSnapshots{resp: ok}
	req := fetchSnapshotRequest(1, snapshotTopic(metadataTopic, 0))
	resp := newFetchSnapshotHandler(s).Handle(t.Context(), &Request{Body: req}).body.(*kmsg.FetchSnapshotResponse)
	if s.calls != 1 || resp != ok || resp.Version != 1 {
		t.Fatalf("answer not passed through: calls %d, %+v", s.calls, resp)
	}
	s = &stubSnapshots{err: fmt.Errorf("node 2: %w", ErrNotController)}
	resp = newFetchSnapshotHandler(s).Handle(t.Context(), &Request{Body: req}).body.(*kmsg.FetchSnapshotResponse)
	if resp.ErrorCode != kerr.NotController.Code {
		t.Fatalf("error %d, want NOT_CONTROLLER", resp.ErrorCode)
	}
}

func TestControllerListenerReleaseAddsFetchSnapshot(t *testing.T) {
	rel := ControllerListenerRelease()
	i := slices.IndexFunc(rel.APIs, func(a VersionRange) bool { return a.Key == 59 })
	if i < 0 || rel.APIs[i].Min != 0 || rel.APIs[i].Max != 1 {
		t.Fatalf("key 59 not advertised v0-1: %+v", rel.APIs)
	}
	if !slices.IsSortedFunc(rel.APIs, func(a, b VersionRange) int { return int(a.Key) - int(b.Key) }) {
		t.Fatal("APIs not sorted by key")
	}
	if slices.ContainsFunc(PinnedRelease().APIs, func(a VersionRange) bool { return a.Key == 59 }) {
		t.Fatal("the broker vector must not gain FetchSnapshot")
	}
	r, err := NewRegistry(rel, RegistryInfo{}, ControllerHandlers(ControllerDeps{MetadataLog: &stubSnapshots{}}))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := r.Supported(59); !ok || v.Min != 0 || v.Max != 1 {
		t.Fatalf("controller registry serves FetchSnapshot %+v %v, want v0-1", v, ok)
	}
}
