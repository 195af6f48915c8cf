package api

// AlterPartition (key 56), versions 0-3: served on the CONTROLLER listener
// only, as in Kafka: a partition leader asks the active controller to
// shrink or expand its ISR (KIP-497; v3 carries the members' broker epochs,
// KIP-903). The controller checks the broker epoch, leader epoch and
// partition epoch, so a stale leader's request is refused
// (STALE_BROKER_EPOCH, FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION); a node
// that is not the active controller answers NOT_CONTROLLER.
//
// Deviations: LeaderRecoveryState RECOVERING is refused (INVALID_REQUEST):
// Sluice never elects uncleanly into a recovering state.

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ISRAlterer is the node as the AlterPartition handler sees it: the active
// controller computes and commits the change; any other node fails with an
// error wrapping ErrNotController.
type ISRAlterer interface {
	AlterPartition(ctx context.Context, req *kmsg.AlterPartitionRequest) (*kmsg.AlterPartitionResponse, error)
}

// AlterPartitionHandler serves AlterPartition through a; the node passes it
// to NewRegistry with the controller registry, whose release comes from
// WithAlterPartition.
func AlterPartitionHandler(a ISRAlterer) Handler {
	return Handler{
		Key:        56,
		MinVersion: 0,
		MaxVersion: 3,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.AlterPartitionRequest)
			resp, err := a.AlterPartition(ctx, body)
			if err != nil {
				resp = kmsg.NewPtrAlterPartitionResponse()
				resp.ErrorCode = ControlPlaneErrorCode(err)
			}
			resp.SetVersion(body.Version)
			return Reply(resp)
		},
	}
}

// WithAlterPartition returns rel advertising AlterPartition v0-3 (the
// controller's vector; brokers do not serve it).
func WithAlterPartition(rel Release) Release {
	rel.APIs = slices.Clone(rel.APIs)
	if !slices.ContainsFunc(rel.APIs, func(a VersionRange) bool { return a.Key == 56 }) {
		rel.APIs = append(rel.APIs, VersionRange{Key: 56, Min: 0, Max: 3})
	}
	slices.SortFunc(rel.APIs, func(a, b VersionRange) int { return int(a.Key) - int(b.Key) })
	return rel
}
