package web

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// A replica's lag is the leader's log end offset minus its own, as
// kafka-metadata-quorum describe --replication prints it.
func TestReplicaViewsLag(t *testing.T) {
	rs := []kmsg.DescribeQuorumResponseTopicPartitionReplicaState{
		{ReplicaID: 3, LogEndOffset: 90, LastCaughtUpTimestamp: -1},
		{ReplicaID: 1, LogEndOffset: 100, LastCaughtUpTimestamp: 0},
	}
	vs := replicaViews(rs, 100)
	if len(vs) != 2 || vs[0].ID != 1 || vs[0].Lag != 0 || vs[1].ID != 3 || vs[1].Lag != 10 || vs[1].LastCaughtUp != "-" {
		t.Fatalf("views %+v", vs)
	}
}
