package api

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// stubAlterer is a BrokerControl that only alters partitions.
type stubAlterer struct {
	BrokerControl
	resp *kmsg.AlterPartitionResponse
	err  error
}

func (s stubAlterer) AlterPartition(context.Context, *kmsg.AlterPartitionRequest) (*kmsg.AlterPartitionResponse, error) {
	return s.resp, s.err
}

func TestAlterPartitionHandler(t *testing.T) {
	req := kmsg.NewPtrAlterPartitionRequest()
	req.Version = 3
	h := newAlterPartitionHandler(stubAlterer{err: fmt.Errorf("node 2: %w", ErrNotController)})
	resp := h.Handle(t.Context(), &Request{Body: req}).body.(*kmsg.AlterPartitionResponse)
	if resp.ErrorCode != kerr.NotController.Code || resp.Version != 3 {
		t.Fatalf("not the controller: code %d version %d, want NOT_CONTROLLER at v3", resp.ErrorCode, resp.Version)
	}
	ok := kmsg.NewPtrAlterPartitionResponse()
	ok.Topics = []kmsg.AlterPartitionResponseTopic{{Topic: "t"}}
	req.Version = 1
	resp = newAlterPartitionHandler(stubAlterer{resp: ok}).Handle(t.Context(), &Request{Body: req}).body.(*kmsg.AlterPartitionResponse)
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 || resp.Version != 1 {
		t.Fatalf("controller answer not passed through: %+v", resp)
	}
}

func TestControllerListenerReleaseAddsAlterPartition(t *testing.T) {
	rel := ControllerListenerRelease()
	i := slices.IndexFunc(rel.APIs, func(a VersionRange) bool { return a.Key == 56 })
	if i < 0 || rel.APIs[i].Max != 3 {
		t.Fatalf("key 56 not advertised v0-3: %+v", rel.APIs)
	}
	if !slices.IsSortedFunc(rel.APIs, func(a, b VersionRange) int { return int(a.Key) - int(b.Key) }) {
		t.Fatal("APIs not sorted by key")
	}
	if slices.ContainsFunc(PinnedRelease().APIs, func(a VersionRange) bool { return a.Key == 56 }) {
		t.Fatal("the broker vector must not gain AlterPartition")
	}
}
