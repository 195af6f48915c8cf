package api

// FindCoordinator (key 10), versions 0-6: the pinned Kafka release's range.
//
// Group keys (type 0, and every key of v0) are answered by the group
// coordinator; the first request creates __consumer_offsets and gets
// COORDINATOR_NOT_AVAILABLE until the topic has a leader, as in Kafka.
// v4+ batches keys. Deviations: transactions are not built, so transaction
// keys (type 1) get INVALID_REQUEST with a message saying so. Kafka answers
// COORDINATOR_NOT_AVAILABLE only while its transaction log is loading; a
// retriable error here would make a transactional Java producer retry until
// max.block.ms, while a non-retriable one fails initTransactions() at once
// with our message. Share-group keys (type 2) and unknown types get
// INVALID_REQUEST, since share groups are not served.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/internal/coordinator/runtime"
)

const (
	coordinatorKeyGroup       int8 = 0
	coordinatorKeyTransaction int8 = 1
)

// transactionsUnsupported is the message a transactional producer sees.
const transactionsUnsupported = "Sluice does not serve transactions yet: transactional.id is not supported (see docs/compatibility.md)"

func newFindCoordinatorHandler(gd *GroupPlaneDeps) Handler {
	return Handler{
		Key: 10, MinVersion: 0, MaxVersion: 6,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.FindCoordinatorRequest)
			listener := ""
			if req.Conn != nil {
				listener = req.Conn.Listener
			}
			return Reply(findCoordinator(ctx, gd.Coordinator, listener, body))
		},
	}
}

func findCoordinator(ctx context.Context, gp GroupPlane, listener string, req *kmsg.FindCoordinatorRequest) *kmsg.FindCoordinatorResponse {
	resp := kmsg.NewPtrFindCoordinatorResponse()
	resp.SetVersion(req.Version)
	keyType := req.CoordinatorType
	if req.Version == 0 {
		keyType = coordinatorKeyGroup
	}
	one := func(key string) kmsg.FindCoordinatorResponseCoordinator {
		c := kmsg.NewFindCoordinatorResponseCoordinator()
		c.Key = key
		var node runtime.Node
		var code int16
		switch keyType {
		case coordinatorKeyGroup:
			node, code = gp.FindCoordinator(ctx, key, listener)
		default: // transaction and share-group keys, unknown types
			code = kerr.InvalidRequest.Code
		}
		c.ErrorCode = code
		if code != 0 {
			c.NodeID, c.Port = -1, -1
			msg := kerr.ErrorForCode(code).(*kerr.Error).Description
			if keyType == coordinatorKeyTransaction {
				msg = transactionsUnsupported
			}
			c.ErrorMessage = &msg
			return c
		}
		c.NodeID, c.Host, c.Port = node.NodeID, node.Host, node.Port
		return c
	}
	if req.Version >= 4 {
		for _, key := range req.CoordinatorKeys {
			resp.Coordinators = append(resp.Coordinators, one(key))
		}
		return resp
	}
	c := one(req.CoordinatorKey)
	resp.ErrorCode, resp.NodeID, resp.Host, resp.Port = c.ErrorCode, c.NodeID, c.Host, c.Port
	if req.Version >= 1 {
		resp.ErrorMessage = c.ErrorMessage
	}
	return resp
}
