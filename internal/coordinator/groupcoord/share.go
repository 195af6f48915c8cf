package groupcoord

// Share groups (KIP-932) in the group coordinator: ShareGroupHeartbeat and
// ShareGroupDescribe run on the group's shard; the share state of the
// groups' partitions lives in the share coordinator, reached through a
// SharePersister (Kafka's Persister). As in Kafka 4.4, a heartbeat that
// needs partitions initialized is answered first, and the initialization
// runs after it; its outcome is written back to the group
// (ShareGroupStatePartitionMetadata), so that the next heartbeat hands
// the initialized partitions out.

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/coordinator/group"
)

// SharePersister is the share coordinator as share groups need it: the
// state of a group's partitions is created before they are assigned and
// deleted with the group. Implementations send Kafka's
// InitializeShareGroupState and DeleteShareGroupState to the share
// coordinators of the partitions.
type SharePersister interface {
	// InitializeState creates the state of req's partitions, starting at
	// the state epoch req.GroupEpoch (the start offset is left for the
	// share partition to decide, Kafka's -1). Any error, or an error of
	// one partition, fails the whole request: its partitions are asked
	// again on a later heartbeat.
	InitializeState(ctx context.Context, req group.ShareStateRequest) error
	// DeleteState deletes the state of req's partitions (DeleteGroups of a
	// share group). A *kerr.Error's code is the group's answer; another
	// error answers UNKNOWN_SERVER_ERROR.
	DeleteState(ctx context.Context, req group.ShareStateRequest) error
}

// shareStateTimeout bounds one persister call and the write of its
// outcome.
const shareStateTimeout = 30 * time.Second

// shareLink holds the persister and the initializations in flight.
type shareLink struct {
	mu        sync.Mutex
	persister SharePersister
	inflight  sync.WaitGroup
}

// SetSharePersister connects share groups to the share coordinator; the
// node calls it before serving share groups. Without one, no partition is
// ever initialized (none is assigned) and DeleteGroups has no state to
// delete.
func (c *GroupCoordinator) SetSharePersister(p SharePersister) {
	c.share.mu.Lock()
	defer c.share.mu.Unlock()
	c.share.persister = p
}

func (c *GroupCoordinator) sharePersister() SharePersister {
	c.share.mu.Lock()
	defer c.share.mu.Unlock()
	return c.share.persister
}

// ShareGroupHeartbeat serves a ShareGroupHeartbeat; it answers once what
// the heartbeat changed is durable, and then starts the initialization of
// share state the heartbeat asked for.
func (c *GroupCoordinator) ShareGroupHeartbeat(ctx context.Context, req group.ShareHeartbeatRequest) group.ShareHeartbeatResult {
	if code, msg := group.ValidateShareHeartbeat(req); code != 0 {
		return group.ShareHeartbeatResult{ErrorCode: code, ErrorMessage: &msg}
	}
	res, code := call(ctx, c, req.GroupID, func(now time.Time, m *group.Manager, reply func(group.ShareHeartbeatResult)) {
		m.ShareHeartbeat(now, req, reply)
	})
	if code != 0 {
		return group.ShareHeartbeatResult{ErrorCode: code}
	}
	if init := res.Initialize; init != nil {
		res.Initialize = nil
		c.share.inflight.Add(1)
		go func() {
			defer c.share.inflight.Done()
			c.initializeShareState(*init)
		}()
	}
	return res
}

// initializeShareState asks the persister for a group's partitions and
// writes the outcome to the group: initialized, or back to be asked again.
func (c *GroupCoordinator) initializeShareState(req group.ShareStateRequest) {
	p := c.sharePersister()
	if p == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), shareStateTimeout)
	defer cancel()
	perr := p.InitializeState(ctx, req)
	if perr != nil {
		slog.Warn("share group state initialization failed", "group", req.GroupID, "err", perr)
	}
	_, code := call(ctx, c, req.GroupID, func(now time.Time, m *group.Manager, reply func(struct{})) {
		done := func(error) { reply(struct{}{}) }
		if perr != nil {
			m.ShareStateUninitialized(now, req.GroupID, req.Topics, done)
			return
		}
		m.ShareStateInitialized(now, req.GroupID, req.Topics, done)
	})
	if code != 0 {
		// The shard moved or stopped: the partitions stay initializing
		// and are asked again after group.share.initialize.retry.interval.ms.
		slog.Warn("share group state initialization not recorded", "group", req.GroupID, "code", code)
	}
}

// ShareGroupDescribe serves one group of a ShareGroupDescribe.
func (c *GroupCoordinator) ShareGroupDescribe(ctx context.Context, groupID string) group.ShareGroupDescription {
	if groupID == "" {
		return group.ShareGroupDescription{ErrorCode: kerr.InvalidGroupID.Code}
	}
	res, code := call(ctx, c, groupID, func(_ time.Time, m *group.Manager, reply func(group.ShareGroupDescription)) {
		reply(m.DescribeShareGroup(groupID))
	})
	if code != 0 {
		return group.ShareGroupDescription{GroupID: groupID, ErrorCode: code}
	}
	return res
}

// shareDelete is the first step's answer of deleting a share group.
type shareDelete struct {
	share bool
	req   *group.ShareStateRequest
	code  int16
}

// deleteShareGroup deletes a share group as Kafka's DeleteGroups does:
// its partitions move to the deleting topics, the persister deletes their
// state, then the group's tombstones are written. done is false when the
// group is not a share group (DeleteGroup goes on as for the others).
func (c *GroupCoordinator) deleteShareGroup(ctx context.Context, groupID string) (int16, bool) {
	first, code := call(ctx, c, groupID, func(now time.Time, m *group.Manager, reply func(shareDelete)) {
		if !m.IsShareGroup(groupID) {
			reply(shareDelete{})
			return
		}
		m.PrepareShareDelete(now, groupID, func(req *group.ShareStateRequest, code int16) {
			reply(shareDelete{share: true, req: req, code: code})
		})
	})
	switch {
	case code != 0:
		return code, true
	case !first.share:
		return 0, false
	case first.code != 0:
		return first.code, true
	}
	if p := c.sharePersister(); p != nil && first.req != nil {
		if err := p.DeleteState(ctx, *first.req); err != nil {
			var ke *kerr.Error
			if errors.As(err, &ke) {
				return ke.Code, true
			}
			return kerr.UnknownServerError.Code, true
		}
	}
	res, code := call(ctx, c, groupID, func(now time.Time, m *group.Manager, reply func(int16)) {
		m.Delete(now, groupID, reply)
	})
	if code != 0 {
		return code, true
	}
	return res, true
}
