package quorumctl

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/quorum"
)

// Membership changes a dynamic quorum's voters (*quorum.Driver).
type Membership interface {
	AddVoter(ctx context.Context, m quorum.Member, timeout time.Duration) error
	RemoveVoter(ctx context.Context, id int32, dir kafka.UUID) error
	UpdateVoter(ctx context.Context, m quorum.Member) error
}

// defaultAddVoterTimeout bounds a new voter's catch-up when the request
// gives no timeout.
const defaultAddVoterTimeout = 30 * time.Second

// AddRaftVoter adds a voter (KIP-853). The answer comes once the voter is
// promoted, or with Kafka's error.
func (c *QuorumController) AddRaftVoter(ctx context.Context, req *kmsg.AddRaftVoterRequest) *kmsg.AddRaftVoterResponse {
	resp := kmsg.NewPtrAddRaftVoterResponse()
	if code, msg, ok := c.checkClusterID(req.ClusterID); !ok {
		resp.ErrorCode, resp.ErrorMessage = code, &msg
		return resp
	}
	m := quorum.Member{ID: req.VoterID, DirectoryID: req.VoterDirectoryID}
	for _, l := range req.Listeners {
		m.Endpoints = append(m.Endpoints, quorum.Endpoint{Name: l.Name, Host: l.Host, Port: int32(l.Port)})
	}
	if _, ok := m.Endpoint(c.opts.Listener); !ok {
		msg := "Provided listeners do not contain a listener for " + c.opts.Listener
		resp.ErrorCode, resp.ErrorMessage = kerr.InvalidRequest.Code, &msg
		return resp
	}
	timeout := time.Duration(req.TimeoutMillis) * time.Millisecond
	if timeout <= 0 {
		timeout = defaultAddVoterTimeout
	}
	resp.ErrorCode, resp.ErrorMessage = changeError(c.membership().AddVoter(ctx, m, timeout))
	return resp
}

// RemoveRaftVoter removes the voter (id, directory id) (KIP-853).
func (c *QuorumController) RemoveRaftVoter(ctx context.Context, req *kmsg.RemoveRaftVoterRequest) *kmsg.RemoveRaftVoterResponse {
	resp := kmsg.NewPtrRemoveRaftVoterResponse()
	if code, msg, ok := c.checkClusterID(req.ClusterID); !ok {
		resp.ErrorCode, resp.ErrorMessage = code, &msg
		return resp
	}
	resp.ErrorCode, resp.ErrorMessage = changeError(c.membership().RemoveVoter(ctx, req.VoterID, req.VoterDirectoryID))
	return resp
}

// UpdateRaftVoter replaces a voter's endpoints; a voter sends it to the
// leader when its listeners differ from what the voter set records.
func (c *QuorumController) UpdateRaftVoter(ctx context.Context, req *kmsg.UpdateRaftVoterRequest) *kmsg.UpdateRaftVoterResponse {
	resp := kmsg.NewPtrUpdateRaftVoterResponse()
	st := c.opts.Quorum.Status()
	resp.CurrentLeader.LeaderID, resp.CurrentLeader.LeaderEpoch = st.Leader, int32(st.Epoch)
	if code, _, ok := c.checkClusterID(req.ClusterID); !ok {
		resp.ErrorCode = code
		return resp
	}
	if req.CurrentLeaderEpoch != int32(st.Epoch) && st.IsLeader {
		resp.ErrorCode = kerr.FencedLeaderEpoch.Code
		if req.CurrentLeaderEpoch > int32(st.Epoch) {
			resp.ErrorCode = kerr.UnknownLeaderEpoch.Code
		}
		return resp
	}
	m := quorum.Member{ID: req.VoterID, DirectoryID: req.VoterDirectoryID}
	for _, l := range req.Listeners {
		m.Endpoints = append(m.Endpoints, quorum.Endpoint{Name: l.Name, Host: l.Host, Port: int32(l.Port)})
	}
	resp.ErrorCode, _ = changeError(c.membership().UpdateVoter(ctx, m))
	return resp
}

// membership is the driver's membership side; a quorum without one (the
// simulation) refuses changes as a static quorum.
func (c *QuorumController) membership() Membership {
	if m, ok := c.opts.Quorum.(Membership); ok {
		return m
	}
	return staticMembership{}
}

type staticMembership struct{}

func (staticMembership) AddVoter(context.Context, quorum.Member, time.Duration) error {
	return quorum.ErrStaticQuorum
}
func (staticMembership) RemoveVoter(context.Context, int32, kafka.UUID) error {
	return quorum.ErrStaticQuorum
}
func (staticMembership) UpdateVoter(context.Context, quorum.Member) error {
	return quorum.ErrStaticQuorum
}

// checkClusterID refuses a request for another cluster, as Kafka's raft
// client does (INCONSISTENT_CLUSTER_ID); a null id is accepted.
func (c *QuorumController) checkClusterID(id *string) (int16, string, bool) {
	if id == nil || c.opts.ClusterID == "" || *id == c.opts.ClusterID {
		return 0, "", true
	}
	return kerr.InconsistentClusterID.Code, "", false
}

// changeError maps a membership change's outcome to Kafka's error code and
// message.
func changeError(err error) (int16, *string) {
	if err == nil {
		return 0, nil
	}
	msg := err.Error()
	var notLeader quorum.NotLeaderError
	switch {
	case errors.As(err, &notLeader):
		msg = "this controller is not the quorum leader"
		return kerr.NotLeaderForPartition.Code, &msg
	case errors.Is(err, quorum.ErrStaticQuorum):
		return kerr.UnsupportedVersion.Code, &msg
	case errors.Is(err, quorum.ErrDuplicateVoter):
		return kerr.DuplicateVoter.Code, &msg
	case errors.Is(err, quorum.ErrVoterNotFound):
		return kerr.VoterNotFound.Code, &msg
	case errors.Is(err, quorum.ErrChangePending), errors.Is(err, quorum.ErrChangeTimedOut),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return kerr.RequestTimedOut.Code, &msg
	}
	return kerr.UnknownServerError.Code, &msg
}
