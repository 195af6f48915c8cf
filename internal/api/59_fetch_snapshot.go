package api

// FetchSnapshot (key 59), versions 0-1: the pinned Kafka release's range.
// Served on the CONTROLLER listener only, as in Kafka (KIP-630): an
// observer (a dedicated broker) whose metadata Fetch was answered with a
// SnapshotId, because it asked for an offset the active controller has
// compacted away, pulls that snapshot in chunks, then fetches the log
// after it.
//
// Behaviour as Kafka's: exactly one partition, __cluster_metadata-0, per
// request (several topics or partitions: INVALID_REQUEST; another
// partition: UNKNOWN_TOPIC_OR_PARTITION); a cluster id that is not the
// node's is INCONSISTENT_CLUSTER_ID; only the active controller serves it
// (others answer NOT_LEADER_OR_FOLLOWER with the leader they know); a
// snapshot id that is not on disk is SNAPSHOT_NOT_FOUND; a position outside
// the snapshot is POSITION_OUT_OF_RANGE; a chunk is at most MaxBytes.
//
// Deviations: the bytes are Sluice's checkpoint file (docs/quorum.md), not
// Kafka's record batches of metadata records, so only a Sluice observer can
// read them; v1's ReplicaDirectoryId and NodeEndpoints are ignored and
// empty (no KIP-853 dynamic quorum).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fetchSnapshotKey is FetchSnapshot's api key.
const fetchSnapshotKey = 59

// newFetchSnapshotHandler serves FetchSnapshot on CONTROLLER listeners:
// logs reads the active controller's newest checkpoint once the request
// has been checked to name exactly __cluster_metadata-0.
func newFetchSnapshotHandler(logs MetadataLogServer) Handler {
	return Handler{
		Key:        fetchSnapshotKey,
		MinVersion: 0,
		MaxVersion: 1,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.FetchSnapshotRequest)
			var resp *kmsg.FetchSnapshotResponse
			switch {
			case !req.authorizeCluster(opClusterAction): // Kafka: CLUSTER_ACTION
				resp = kmsg.NewPtrFetchSnapshotResponse()
				resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
			case len(body.Topics) != 1 || len(body.Topics[0].Partitions) != 1:
				resp = kmsg.NewPtrFetchSnapshotResponse()
				resp.ErrorCode = kerr.InvalidRequest.Code
			case body.Topics[0].Topic != metadataTopic || body.Topics[0].Partitions[0].Partition != 0:
				resp = unknownSnapshotPartition(body)
			default:
				var err error
				if resp, err = logs.FetchSnapshot(ctx, body); err != nil {
					resp = kmsg.NewPtrFetchSnapshotResponse()
					resp.ErrorCode = ControllerErrorCode(err)
				}
			}
			resp.SetVersion(body.Version)
			return Reply(resp)
		},
	}
}

func unknownSnapshotPartition(req *kmsg.FetchSnapshotRequest) *kmsg.FetchSnapshotResponse {
	resp := kmsg.NewPtrFetchSnapshotResponse()
	t := req.Topics[0]
	rt := kmsg.NewFetchSnapshotResponseTopic()
	rt.Topic = t.Topic
	rp := kmsg.NewFetchSnapshotResponseTopicPartition()
	rp.Partition = t.Partitions[0].Partition
	rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
	rp.SnapshotID.EndOffset, rp.SnapshotID.Epoch = -1, -1
	rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = -1, -1
	rt.Partitions = append(rt.Partitions, rp)
	resp.Topics = append(resp.Topics, rt)
	return resp
}
