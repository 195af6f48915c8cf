package api

// FindCoordinator (key 10), versions 0-6: the pinned Kafka release's range.
//
// Group keys (type 0, and every key of v0) are answered by the group
// coordinator, transaction keys (type 1) by the transaction coordinator:
// the first request creates __consumer_offsets or __transaction_state and
// gets COORDINATOR_NOT_AVAILABLE until the topic has a leader, as in
// Kafka. v4+ batches keys. Share keys (type 2, "group:topicId:partition",
// which brokers send to find the share coordinator of a share partition's
// state) are answered by the share coordinator from v6, and need
// CLUSTER_ACTION on the cluster as in Kafka; unknown types get
// INVALID_REQUEST.
//
// Deviation: a broker built without the transaction coordinator (a test's
// handler set) answers transaction keys INVALID_REQUEST with a message
// saying transactions are not served, so that a producer fails at once
// instead of retrying until max.block.ms.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/coordinator/runtime"
)

const (
	coordinatorKeyGroup       int8 = 0
	coordinatorKeyTransaction int8 = 1
	coordinatorKeyShare       int8 = 2
)

// ShareLocator finds the share coordinator of a share key;
// *sharecoord.ShareCoordinator implements it.
type ShareLocator interface {
	FindCoordinator(ctx context.Context, key, listener string) (runtime.Node, int16)
}

// transactionsUnsupported is the message a transactional producer sees
// from a broker without the transaction coordinator.
const transactionsUnsupported = "this broker does not serve transactions: transactional.id is not supported (see docs/compatibility.md)"

func newFindCoordinatorHandler(gd *GroupPlaneDeps, td *TxnPlaneDeps, sl ShareLocator) Handler {
	return Handler{
		Key: 10, MinVersion: 0, MaxVersion: 6,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.FindCoordinatorRequest)
			listener := ""
			if req.Conn != nil {
				listener = req.Conn.Listener
			}
			resp := findCoordinator(ctx, gd.Coordinator, td.txnCoordinator(), listener, body, findCoordinatorAuth(req))
			if body.CoordinatorType == coordinatorKeyShare && body.Version >= 6 {
				findShareCoordinators(ctx, sl, listener, body, resp, req.authorizeCluster(opClusterAction))
			}
			return Reply(resp)
		},
	}
}

// findCoordinatorAuth is Kafka's getCoordinator check: DESCRIBE on the
// group (GROUP_AUTHORIZATION_FAILED) or the transactional id
// (TRANSACTIONAL_ID_AUTHORIZATION_FAILED); it returns the refusal's code.
func findCoordinatorAuth(req *Request) func(keyType int8, key string) int16 {
	return func(keyType int8, key string) int16 {
		switch {
		case keyType == coordinatorKeyGroup && !req.authorize(opDescribe, resGroup, key):
			return kerr.GroupAuthorizationFailed.Code
		case keyType == coordinatorKeyTransaction && !req.authorize(opDescribe, resTxnID, key):
			return kerr.TransactionalIDAuthorizationFailed.Code
		}
		return 0
	}
}

func findCoordinator(ctx context.Context, gp GroupPlane, tp TxnPlane, listener string, req *kmsg.FindCoordinatorRequest, refused func(keyType int8, key string) int16) *kmsg.FindCoordinatorResponse {
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
		code := kerr.InvalidRequest.Code // share-group keys, unknown types
		switch {
		case refused(keyType, key) != 0:
			code = refused(keyType, key)
		case keyType == coordinatorKeyGroup:
			node, code = gp.FindCoordinator(ctx, key, listener)
		case keyType == coordinatorKeyTransaction && tp != nil:
			node, code = tp.FindCoordinator(ctx, key, listener)
		}
		c.ErrorCode = code
		if code != 0 {
			c.NodeID, c.Port = -1, -1
			msg := kerr.ErrorForCode(code).(*kerr.Error).Description
			if keyType == coordinatorKeyTransaction && tp == nil && code == kerr.InvalidRequest.Code {
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

// findShareCoordinators answers share keys (v6+ only batches, so only
// Coordinators is filled): the share coordinator's leader, or
// CLUSTER_AUTHORIZATION_FAILED without CLUSTER_ACTION, or INVALID_REQUEST
// on a broker without the share coordinator.
func findShareCoordinators(ctx context.Context, sl ShareLocator, listener string, req *kmsg.FindCoordinatorRequest, resp *kmsg.FindCoordinatorResponse, allowed bool) {
	for i := range resp.Coordinators {
		c := &resp.Coordinators[i]
		node, code := runtime.Node{NodeID: -1, Port: -1}, kerr.InvalidRequest.Code
		switch {
		case !allowed:
			code = kerr.ClusterAuthorizationFailed.Code
		case sl != nil:
			node, code = sl.FindCoordinator(ctx, c.Key, listener)
		}
		c.ErrorCode, c.ErrorMessage = code, nil
		if code != 0 {
			c.NodeID, c.Host, c.Port = -1, "", -1
			msg := kerr.ErrorForCode(code).(*kerr.Error).Description
			c.ErrorMessage = &msg
			continue
		}
		c.NodeID, c.Host, c.Port = node.NodeID, node.Host, node.Port
	}
}
