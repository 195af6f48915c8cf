package runtime

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// CreateTopicsCreator adapts a CreateTopics operation (the node's control
// plane) into a TopicCreator; a topic that already exists is success.
func CreateTopicsCreator(create func(ctx context.Context, req *kmsg.CreateTopicsRequest) (*kmsg.CreateTopicsResponse, error)) TopicCreator {
	return func(ctx context.Context, name string, partitions int32, rf int16, configs map[string]string) error {
		req := kmsg.NewPtrCreateTopicsRequest()
		req.SetVersion(7)
		req.TimeoutMillis = 30000
		t := kmsg.NewCreateTopicsRequestTopic()
		t.Topic, t.NumPartitions, t.ReplicationFactor = name, partitions, rf
		for k, v := range configs {
			c := kmsg.NewCreateTopicsRequestTopicConfig()
			c.Name, c.Value = k, kmsg.StringPtr(v)
			t.Configs = append(t.Configs, c)
		}
		req.Topics = append(req.Topics, t)
		resp, err := create(ctx, req)
		if err != nil {
			return err
		}
		if len(resp.Topics) != 1 {
			return fmt.Errorf("creating %s: %d topics in the answer", name, len(resp.Topics))
		}
		code := resp.Topics[0].ErrorCode
		if code == 0 || code == kerr.TopicAlreadyExists.Code {
			return nil
		}
		return fmt.Errorf("creating %s: %w", name, kerr.ErrorForCode(code))
	}
}

// CreateTopic creates the runtime's topic unless the image already has it
// (lookups create it on first use, as Kafka's FindCoordinator does).
// Concurrent callers wait for one creation.
func (r *Runtime[S]) CreateTopic(ctx context.Context) error {
	if r.opts.CreateTopic == nil {
		return fmt.Errorf("no topic creator")
	}
	r.creating.Lock()
	defer r.creating.Unlock()
	if _, ok := r.opts.Image().Topic(r.opts.Topic); ok {
		return nil
	}
	// As in Kafka, a replication factor above the number of brokers makes
	// the creation fail (and lookups keep answering
	// COORDINATOR_NOT_AVAILABLE) until enough brokers are up.
	err := r.opts.CreateTopic(ctx, r.opts.Topic, r.opts.NumPartitions, r.opts.ReplicationFactor, r.opts.TopicConfigs)
	if err != nil {
		return fmt.Errorf("creating %s: %w", r.opts.Topic, err)
	}
	return nil
}
