package api

// DescribeLogDirs (key 35), versions 1-5: the pinned Kafka release's range
// (Kafka 4.0 dropped v0, KIP-896).
//
// Behaviour as Kafka's: every log directory of the node with its partition
// logs (all of them for a null topic list, else the ones asked for), each
// with its size in bytes; v4+ the file system's total and usable bytes; an
// offline directory answers KAFKA_STORAGE_ERROR.
//
// A future log (a move between dirs, AlterReplicaLogDirs) is listed in its
// destination dir with is_future and, as offset lag, how far its end is
// behind the current log's; a current log's lag is max(high watermark -
// log end offset, 0), as Kafka's getLogEndOffsetLag.
//
// Deviations: v5's is_cordoned is always false (cordoned.log.dirs is not
// applied).

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func newDescribeLogDirsHandler(dirs LogDirSource) Handler {
	return Handler{
		Key:        35,
		MinVersion: 1,
		MaxVersion: 5,
		Handle: func(_ context.Context, req *Request) Response {
			body := req.Body.(*kmsg.DescribeLogDirsRequest)
			if !req.authorizeCluster(opDescribe) {
				// Kafka: DESCRIBE on the cluster, else no results and
				// CLUSTER_AUTHORIZATION_FAILED (v3+ carry the code).
				resp := kmsg.NewPtrDescribeLogDirsResponse()
				resp.SetVersion(body.Version)
				resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
				return Reply(resp)
			}
			return Reply(describeLogDirs(dirs.LogDirs(), body))
		},
	}
}

func describeLogDirs(dirs []LogDirDescription, req *kmsg.DescribeLogDirsRequest) *kmsg.DescribeLogDirsResponse {
	resp := kmsg.NewPtrDescribeLogDirsResponse()
	resp.SetVersion(req.Version)
	wanted := func(topic string, partition int32) bool {
		if req.Topics == nil {
			return true
		}
		return slices.ContainsFunc(req.Topics, func(t kmsg.DescribeLogDirsRequestTopic) bool {
			return t.Topic == topic && slices.Contains(t.Partitions, partition)
		})
	}
	for _, d := range dirs {
		rd := kmsg.NewDescribeLogDirsResponseDir()
		rd.Dir, rd.TotalBytes, rd.UsableBytes = d.Path, d.TotalBytes, d.UsableBytes
		if d.Err != nil {
			rd.ErrorCode = kerr.KafkaStorageError.Code
			resp.Dirs = append(resp.Dirs, rd)
			continue
		}
		for _, p := range d.Partitions {
			if !wanted(p.Topic, p.Partition) {
				continue
			}
			i := slices.IndexFunc(rd.Topics, func(t kmsg.DescribeLogDirsResponseDirTopic) bool { return t.Topic == p.Topic })
			if i < 0 {
				t := kmsg.NewDescribeLogDirsResponseDirTopic()
				t.Topic = p.Topic
				rd.Topics = append(rd.Topics, t)
				i = len(rd.Topics) - 1
			}
			rp := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
			rp.Partition, rp.Size, rp.OffsetLag, rp.IsFuture = p.Partition, p.Size, p.OffsetLag, p.IsFuture
			rd.Topics[i].Partitions = append(rd.Topics[i].Partitions, rp)
		}
		resp.Dirs = append(resp.Dirs, rd)
	}
	return resp
}
