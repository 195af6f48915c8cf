package api

// AlterReplicaLogDirs (key 34), versions 1-2: the pinned Kafka release's
// range (Kafka 4.0 dropped v0, KIP-896).
//
// Behaviour as Kafka's (KafkaApis.handleAlterReplicaLogDirsRequest,
// ReplicaManager.alterReplicaLogDirs): ALTER on the cluster, else every
// partition answers CLUSTER_AUTHORIZATION_FAILED; each partition's log is
// moved to the named log dir of this broker through a future log that is
// filled while appends continue and swapped in once caught up; a dir not in
// log.dirs is LOG_DIR_NOT_FOUND, an offline dir or partition
// KAFKA_STORAGE_ERROR, a partition of a known topic not hosted here
// REPLICA_NOT_AVAILABLE (its log will be created in that dir), an unknown
// partition UNKNOWN_TOPIC_OR_PARTITION, a name too long for the future
// dir INVALID_TOPIC_EXCEPTION.
//
// Deviations: the copy is not throttled (replica.alter.log.dirs.io.max.bytes.per.second
// is not applied); log compaction is not paused during the copy.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// LogDirMover moves partition logs between the node's log dirs; a
// LogDirSource that implements it serves AlterReplicaLogDirs.
type LogDirMover interface {
	// AlterReplicaLogDir moves the log of topic-partition to dir; the
	// error is the partition's Kafka error, nil for NONE.
	AlterReplicaLogDir(topic string, partition int32, dir string) *kerr.Error
}

func newAlterReplicaLogDirsHandler(mover LogDirMover) Handler {
	return Handler{
		Key:        34,
		MinVersion: 1,
		MaxVersion: 2,
		Handle: func(_ context.Context, req *Request) Response {
			body := req.Body.(*kmsg.AlterReplicaLogDirsRequest)
			allowed := req.authorizeCluster(opAlter)
			return Reply(alterReplicaLogDirs(body, func(topic string, p int32, dir string) int16 {
				if !allowed {
					return kerr.ClusterAuthorizationFailed.Code
				}
				if err := mover.AlterReplicaLogDir(topic, p, dir); err != nil {
					return err.Code
				}
				return 0
			}))
		},
	}
}

// alterReplicaLogDirs answers every partition of the request, in request
// order, grouped by topic as Kafka's response is.
func alterReplicaLogDirs(req *kmsg.AlterReplicaLogDirsRequest, move func(topic string, p int32, dir string) int16) *kmsg.AlterReplicaLogDirsResponse {
	resp := kmsg.NewPtrAlterReplicaLogDirsResponse()
	resp.SetVersion(req.Version)
	index := map[string]int{}
	for _, d := range req.Dirs {
		for _, t := range d.Topics {
			i, ok := index[t.Topic]
			if !ok {
				rt := kmsg.NewAlterReplicaLogDirsResponseTopic()
				rt.Topic = t.Topic
				resp.Topics = append(resp.Topics, rt)
				i = len(resp.Topics) - 1
				index[t.Topic] = i
			}
			for _, p := range t.Partitions {
				rp := kmsg.NewAlterReplicaLogDirsResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p, move(t.Topic, p, d.Dir)
				resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, rp)
			}
		}
	}
	return resp
}
