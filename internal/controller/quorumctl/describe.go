package quorumctl

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/controller"
	"github.com/sluice-io/sluice/internal/quorum"
)

// DescribeQuorum describes the quorum; only the active controller knows
// its voters' progress, others answer NOT_CONTROLLER.
func (c *QuorumController) DescribeQuorum(_ context.Context, req *kmsg.DescribeQuorumRequest) (*kmsg.DescribeQuorumResponse, error) {
	st := c.opts.Quorum.Status()
	if !st.IsLeader {
		return nil, controller.ErrNotController
	}
	return quorum.DescribeQuorum(req.Version, st, c.description()), nil
}

// description lists the voters and, as observers, every registered broker
// that is not a voter with what its heartbeats reported.
func (c *QuorumController) description() quorum.Description {
	st := c.opts.Quorum.Status()
	d := quorum.Description{Listener: c.opts.Listener, Now: c.opts.Clock.Now()}
	if !st.Dynamic {
		d.Voters = c.opts.Voters
	}
	isVoter := func(id int32) bool {
		return slices.ContainsFunc(c.Voters(), func(v quorum.VoterEndpoint) bool { return v.ID == id }) ||
			slices.ContainsFunc(st.Members, func(m quorum.Member) bool { return m.ID == id })
	}
	for _, id := range c.opts.Image().BrokerIDs() {
		if isVoter(id) {
			continue
		}
		o := quorum.ObserverProgress{ID: id, MetadataOffset: -1}
		if s, ok := c.sessions.Get(id); ok {
			o.MetadataOffset, o.Heard = s.MetadataOffset, s.Last
		}
		d.Observers = append(d.Observers, o)
	}
	return d
}

// Leader is the quorum leader this voter knows (-1: none).
func (c *QuorumController) Leader() int32 { return c.opts.Quorum.Status().Leader }

// Voters are the quorum's voters' CONTROLLER endpoints: the static
// controller.quorum.voters, or a dynamic quorum's applied voters.
func (c *QuorumController) Voters() []quorum.VoterEndpoint {
	st := c.opts.Quorum.Status()
	if !st.Dynamic {
		return slices.Clone(c.opts.Voters)
	}
	var out []quorum.VoterEndpoint
	for _, m := range st.Members {
		if e, ok := m.Endpoint(c.opts.Listener); ok && !m.Learner {
			out = append(out, quorum.VoterEndpoint{ID: m.ID, Host: e.Host, Port: e.Port})
		}
	}
	return out
}
