package node

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/internal/api"
	"sluice/internal/controller"
	"sluice/internal/quorum"
)

// DescribeQuorum implements api.QuorumDescriber for the broker listeners:
// the active controller (or a single voter) describes the quorum; another
// node forwards the request to it, as a Kafka broker does.
func (n *Node) DescribeQuorum(ctx context.Context, req *kmsg.DescribeQuorumRequest) (*kmsg.DescribeQuorumResponse, error) {
	return forwardOr(ctx, n, req, func() (*kmsg.DescribeQuorumResponse, error) {
		if !n.driver.Status().IsLeader {
			return nil, api.ErrNotController
		}
		return n.describeQuorum(req), nil
	})
}

// describeQuorum is the leader's description. A voter's log end offset is
// what raft's progress says it acknowledged, so a dedicated controller
// (which sends no broker heartbeats) shows its real lag; an observer's is
// the metadata offset its heartbeats reported.
func (n *Node) describeQuorum(req *kmsg.DescribeQuorumRequest) *kmsg.DescribeQuorumResponse {
	st := n.driver.Status()
	im := n.Image()
	now := n.clk.Now().UnixMilli()
	resp := kmsg.NewPtrDescribeQuorumResponse()
	resp.SetVersion(req.Version)
	p := kmsg.NewDescribeQuorumResponseTopicPartition()
	p.LeaderID, p.LeaderEpoch, p.HighWatermark = st.Leader, int32(st.Epoch), st.CommitOffset+1
	voter := func(id int32) kmsg.DescribeQuorumResponseTopicPartitionReplicaState {
		r := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
		r.ReplicaID, r.LogEndOffset, r.LastFetchTimestamp, r.LastCaughtUpTimestamp = id, -1, -1, -1
		i := slices.IndexFunc(st.Replicas, func(p quorum.ReplicaProgress) bool { return p.NodeID == id })
		switch {
		case id == st.NodeID:
			r.LogEndOffset, r.LastFetchTimestamp = st.AppliedOffset+1, now
		case i >= 0:
			r.LogEndOffset = st.Replicas[i].EndOffset
			if st.Replicas[i].RecentActive {
				r.LastFetchTimestamp = now
			}
		}
		if r.LastFetchTimestamp >= 0 && r.LogEndOffset >= p.HighWatermark {
			r.LastCaughtUpTimestamp = now
		}
		return r
	}
	observer := func(id int32) kmsg.DescribeQuorumResponseTopicPartitionReplicaState {
		r := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
		r.ReplicaID, r.LogEndOffset, r.LastFetchTimestamp, r.LastCaughtUpTimestamp = id, -1, -1, -1
		var s controller.Session
		var ok bool
		if n.sessions != nil {
			s, ok = n.sessions.Get(id)
		}
		if ok && s.MetadataOffset >= 0 {
			r.LogEndOffset = s.MetadataOffset + 1
			r.LastFetchTimestamp = s.Last.UnixMilli()
			if r.LogEndOffset >= p.HighWatermark {
				r.LastCaughtUpTimestamp = s.Last.UnixMilli()
			}
		}
		return r
	}
	var voters []int32
	for _, v := range n.cfg.Voters() {
		voters = append(voters, v.ID)
		p.CurrentVoters = append(p.CurrentVoters, voter(v.ID))
		node := kmsg.NewDescribeQuorumResponseNode()
		node.NodeID = v.ID
		l := kmsg.NewDescribeQuorumResponseNodeListener()
		l.Name, l.Host, l.Port = n.cfg.ControllerListenerNames()[0], v.Host, uint16(v.Port)
		node.Listeners = append(node.Listeners, l)
		resp.Nodes = append(resp.Nodes, node)
	}
	for _, id := range im.BrokerIDs() {
		if !slices.Contains(voters, id) {
			p.Observers = append(p.Observers, observer(id))
		}
	}
	t := kmsg.NewDescribeQuorumResponseTopic()
	t.Topic = controller.MetadataTopic
	t.Partitions = append(t.Partitions, p)
	resp.Topics = append(resp.Topics, t)
	return resp
}
