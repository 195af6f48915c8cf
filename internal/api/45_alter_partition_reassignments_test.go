package api

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// reassigningController is the fake controller whose reassignment
// operations, run by the real controller, failWith makes fail as a node
// that lost the controller role would.
type reassigningController struct {
	*fakeController
	failWith error
}

func (f *reassigningController) AlterPartitionReassignments(_ context.Context, req *kmsg.AlterPartitionAssignmentsRequest) (*kmsg.AlterPartitionAssignmentsResponse, error) {
	if f.failWith != nil {
		return nil, f.failWith
	}
	recs, resp := f.ctrl.AlterPartitionReassignments(f.image, req)
	f.apply(recs...)
	return resp, nil
}

func (f *reassigningController) ListPartitionReassignments(_ context.Context, req *kmsg.ListPartitionReassignmentsRequest) (*kmsg.ListPartitionReassignmentsResponse, error) {
	if f.failWith != nil {
		return nil, f.failWith
	}
	return f.ctrl.ListPartitionReassignments(f.image, req), nil
}

func TestPartitionReassignmentHandlers(t *testing.T) {
	cp := &reassigningController{fakeController: newFakeController(t, 1, 2)}
	cp.createTopic("t", 1)
	deps := cp.brokerDeps()
	deps.Admin = cp
	r, err := NewRegistry(BrokerRelease(), RegistryInfo{}, BrokerHandlers(deps))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []int16{45, 46} {
		if _, ok := r.Supported(key); !ok {
			t.Fatalf("key %d not served with an AdminController", key)
		}
	}
	st, _ := cp.image.Topic("t")
	current := st.Partitions[0].Replicas[0]
	other := 3 - current

	alter := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	alter.SetVersion(1)
	alter.AllowReplicationFactorChange = true
	rt := kmsg.NewAlterPartitionAssignmentsRequestTopic()
	rt.Topic = "t"
	rp := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
	rp.Partition, rp.Replicas = 0, []int32{other}
	rt.Partitions = append(rt.Partitions, rp)
	alter.Topics = append(alter.Topics, rt)
	resp := reply[*kmsg.AlterPartitionAssignmentsResponse](t, r, alter)
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 || resp.Topics[0].Partitions[0].ErrorCode != 0 || !resp.AllowReplicationFactorChange {
		t.Fatalf("alter: %+v", resp)
	}

	list := reply[*kmsg.ListPartitionReassignmentsResponse](t, r, kmsg.NewPtrListPartitionReassignmentsRequest())
	if len(list.Topics) != 1 || list.Topics[0].Topic != "t" {
		t.Fatalf("list: %+v", list.Topics)
	}
	got := list.Topics[0].Partitions[0]
	if !slices.Equal(got.Replicas, []int32{other, current}) || !slices.Equal(got.AddingReplicas, []int32{other}) ||
		!slices.Equal(got.RemovingReplicas, []int32{current}) {
		t.Fatalf("listed %+v", got)
	}

	// A node that is not the active controller answers NOT_CONTROLLER.
	cp.failWith = fmt.Errorf("forward: %w", ErrNotController)
	resp = reply[*kmsg.AlterPartitionAssignmentsResponse](t, r, alter)
	if !errors.Is(kerr.ErrorForCode(resp.ErrorCode), kerr.NotController) {
		t.Fatalf("alter on a non-controller: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	list = reply[*kmsg.ListPartitionReassignmentsResponse](t, r, kmsg.NewPtrListPartitionReassignmentsRequest())
	if !errors.Is(kerr.ErrorForCode(list.ErrorCode), kerr.NotController) {
		t.Fatalf("list on a non-controller: %v", kerr.ErrorForCode(list.ErrorCode))
	}
}

// Without an AdminController the reassignment keys are left out.
func TestPartitionReassignmentNeedsAnAdminController(t *testing.T) {
	deps := newFakeController(t, 1).brokerDeps()
	deps.Admin = nil
	r, err := NewRegistry(BrokerRelease(), RegistryInfo{}, BrokerHandlers(deps))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []int16{45, 46} {
		if _, ok := r.Supported(key); ok {
			t.Fatalf("key %d served without an AdminController", key)
		}
	}
}
