package api

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/protocol"
)

// FuzzDataPlane serves arbitrary frames to the data-plane handlers over a
// real ReplicaManager: bad requests (bad batches, offsets, epochs, session
// ids, topic ids) must get an answer or a closed connection, never a panic,
// and a streamed Fetch body must write exactly its announced length.
func FuzzDataPlane(f *testing.F) {
	r := dataPlaneRegistry(f, 2)
	seeds := []kmsg.Request{
		produceRequest(9, 1, "t", 0, testBatch(f, 3)),
		produceRequest(13, -1, "", 1, testBatch(f, 1)),
		fetchRequest(13, 0, 0, 0, 1),
		fetchRequest(7, 0, -1, 0),
	}
	lo := kmsg.NewPtrListOffsetsRequest()
	lo.SetVersion(9)
	lo.Topics = []kmsg.ListOffsetsRequestTopic{{Topic: "t", Partitions: []kmsg.ListOffsetsRequestTopicPartition{{Timestamp: -3, CurrentLeaderEpoch: -1}}}}
	dr := kmsg.NewPtrDeleteRecordsRequest()
	dr.SetVersion(2)
	dr.Topics = []kmsg.DeleteRecordsRequestTopic{{Topic: "t", Partitions: []kmsg.DeleteRecordsRequestTopicPartition{{Offset: -1}}}}
	oe := kmsg.NewPtrOffsetForLeaderEpochRequest()
	oe.SetVersion(4)
	oe.Topics = []kmsg.OffsetForLeaderEpochRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetForLeaderEpochRequestTopicPartition{{CurrentLeaderEpoch: -1, LeaderEpoch: 3}}}}
	seeds = append(seeds, lo, dr, oe)
	for _, req := range seeds {
		f.Add(kmsg.NewRequestFormatter(kmsg.FormatterClientID("fuzz")).AppendRequest(nil, req, 1)[4:])
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		h, body, err := protocol.ParseRequestHeader(frame)
		if err != nil {
			return
		}
		// Long polls end with the context, so no input stalls the fuzzer.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		resp, err := r.Serve(ctx, &ConnState{}, h, body)
		if err != nil {
			return
		}
		if !resp.Valid() {
			t.Fatalf("key %d: invalid response", h.APIKey)
		}
		if s := resp.StreamBody(); s != nil {
			n, err := s.WriteFrame(io.Discard, nil)
			if err != nil || n != s.Len() {
				t.Fatalf("streamed %d of %d bytes: %v", n, s.Len(), err)
			}
		}
	})
}
