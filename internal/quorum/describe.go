package quorum

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// VoterEndpoint is a voter's CONTROLLER endpoint (controller.quorum.voters).
type VoterEndpoint struct {
	ID   int32
	Host string
	Port int32
}

// ObserverProgress is what the active controller knows of an observer (a
// broker that is not a voter) from its heartbeats.
type ObserverProgress struct {
	ID int32
	// MetadataOffset is the last metadata offset the broker reported
	// applying (-1: none yet); Heard is when.
	MetadataOffset int64
	Heard          time.Time
}

// Description is what DescribeQuorum reports besides the leader's Status.
type Description struct {
	// Listener is the controller listener's name, for the nodes' endpoints.
	Listener  string
	Voters    []VoterEndpoint
	Observers []ObserverProgress
	Now       time.Time
}

// DescribeQuorum is the leader's answer to DescribeQuorum. A voter's log
// end offset is what raft's progress says it acknowledged, so a dedicated
// controller (which sends no broker heartbeats) shows its real lag; an
// observer's is the metadata offset its heartbeats reported.
func DescribeQuorum(version int16, st Status, d Description) *kmsg.DescribeQuorumResponse {
	now := d.Now.UnixMilli()
	resp := kmsg.NewPtrDescribeQuorumResponse()
	resp.SetVersion(version)
	p := kmsg.NewDescribeQuorumResponseTopicPartition()
	p.LeaderID, p.LeaderEpoch, p.HighWatermark = st.Leader, int32(st.Epoch), st.CommitOffset+1
	if st.Dynamic {
		describeMembers(resp, &p, st, now)
	}
	for _, v := range d.Voters {
		p.CurrentVoters = append(p.CurrentVoters, voterState(st, v.ID, p.HighWatermark, now))
		node := kmsg.NewDescribeQuorumResponseNode()
		node.NodeID = v.ID
		l := kmsg.NewDescribeQuorumResponseNodeListener()
		l.Name, l.Host, l.Port = d.Listener, v.Host, uint16(v.Port)
		node.Listeners = append(node.Listeners, l)
		resp.Nodes = append(resp.Nodes, node)
	}
	for _, o := range d.Observers {
		r := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
		r.ReplicaID, r.LogEndOffset, r.LastFetchTimestamp, r.LastCaughtUpTimestamp = o.ID, -1, -1, -1
		if o.MetadataOffset >= 0 {
			r.LogEndOffset = o.MetadataOffset + 1
			r.LastFetchTimestamp = o.Heard.UnixMilli()
			if r.LogEndOffset >= p.HighWatermark {
				r.LastCaughtUpTimestamp = o.Heard.UnixMilli()
			}
		}
		p.Observers = append(p.Observers, r)
	}
	t := kmsg.NewDescribeQuorumResponseTopic()
	t.Topic = MetadataTopic
	t.Partitions = append(t.Partitions, p)
	resp.Topics = append(resp.Topics, t)
	return resp
}

// describeMembers describes a dynamic quorum's voters with their
// directory ids and every listener they registered, and its learners (new
// voters still catching up) as observers.
func describeMembers(resp *kmsg.DescribeQuorumResponse, p *kmsg.DescribeQuorumResponseTopicPartition, st Status, now int64) {
	for _, m := range st.Members {
		r := voterState(st, m.ID, p.HighWatermark, now)
		r.ReplicaDirectoryID = m.DirectoryID
		if m.Learner {
			p.Observers = append(p.Observers, r)
			continue
		}
		p.CurrentVoters = append(p.CurrentVoters, r)
		node := kmsg.NewDescribeQuorumResponseNode()
		node.NodeID = m.ID
		for _, e := range m.Endpoints {
			l := kmsg.NewDescribeQuorumResponseNodeListener()
			l.Name, l.Host, l.Port = e.Name, e.Host, uint16(e.Port)
			node.Listeners = append(node.Listeners, l)
		}
		resp.Nodes = append(resp.Nodes, node)
	}
}

func voterState(st Status, id int32, hw, now int64) kmsg.DescribeQuorumResponseTopicPartitionReplicaState {
	r := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
	r.ReplicaID, r.LogEndOffset, r.LastFetchTimestamp, r.LastCaughtUpTimestamp = id, -1, -1, -1
	i := slices.IndexFunc(st.Replicas, func(p ReplicaProgress) bool { return p.NodeID == id })
	switch {
	case id == st.NodeID:
		r.LogEndOffset, r.LastFetchTimestamp = st.AppliedOffset+1, now
	case i >= 0:
		r.LogEndOffset = st.Replicas[i].EndOffset
		if st.Replicas[i].RecentActive {
			r.LastFetchTimestamp = now
		}
	}
	if r.LastFetchTimestamp >= 0 && r.LogEndOffset >= hw {
		r.LastCaughtUpTimestamp = now
	}
	return r
}
