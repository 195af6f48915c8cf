package runtime

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestCreateTopicsCreator(t *testing.T) {
	var got *kmsg.CreateTopicsRequest
	code := int16(0)
	create := CreateTopicsCreator(func(_ context.Context, req *kmsg.CreateTopicsRequest) (*kmsg.CreateTopicsResponse, error) {
		got = req
		resp := kmsg.NewPtrCreateTopicsResponse()
		rt := kmsg.NewCreateTopicsResponseTopic()
		rt.Topic, rt.ErrorCode = req.Topics[0].Topic, code
		resp.Topics = append(resp.Topics, rt)
		return resp, nil
	})
	if err := create(context.Background(), "__consumer_offsets", 50, 1, map[string]string{"cleanup.policy": "compact"}); err != nil {
		t.Fatal(err)
	}
	if got.Topics[0].NumPartitions != 50 || got.Topics[0].ReplicationFactor != 1 || *got.Topics[0].Configs[0].Value != "compact" {
		t.Fatalf("request %+v", got.Topics[0])
	}
	code = kerr.TopicAlreadyExists.Code
	if err := create(context.Background(), "__consumer_offsets", 50, 1, nil); err != nil {
		t.Fatalf("already exists: %v", err)
	}
	code = kerr.InvalidReplicationFactor.Code
	if err := create(context.Background(), "__consumer_offsets", 50, 3, nil); err == nil {
		t.Fatal("want an error")
	}
}
