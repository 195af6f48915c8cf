package api

import (
	"context"
	"errors"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/quota"
)

// mutationQuotaAdmin applies the controller mutation quota (KIP-599) to
// the topic mutations a client asks of the controller: each topic's
// partitions are taken from the quota in request order, as Kafka's
// ReplicationControlManager does, before the request goes on; a topic a
// strict quota refuses (CreateTopics v6+, DeleteTopics v5+,
// CreatePartitions v3+) is answered THROTTLING_QUOTA_EXCEEDED and not
// sent, and a topic the controller then refuses gets its partitions back
// (Kafka records them only once its checks passed). The quota applies on
// the broker the client reached.
type mutationQuotaAdmin struct {
	AdminController
	cfg  *config.Config
	meta MetadataView
}

// throttledMessage is THROTTLING_QUOTA_EXCEEDED's message, for a topic's answer.
func throttledMessage() *string {
	m := quota.Message
	return &m
}

// mutationPlan is the quota's verdict over a request's topics.
type mutationPlan struct {
	mq      *quota.MutationQuota
	permits map[string]float64
	refused map[string]bool
}

// plan takes each named topic's partitions from the quota; n <= 0 takes
// nothing (the controller refuses such a topic first).
func plan(qr *quotaRequest, strict bool, names []string, partitions func(i int) float64) *mutationPlan {
	p := &mutationPlan{mq: qr.q.ControllerMutation.NewMutationQuota(qr.user, qr.clientID, strict),
		permits: map[string]float64{}, refused: map[string]bool{}}
	seen := map[string]int{}
	for _, n := range names {
		seen[n]++
	}
	for i, name := range names {
		n := partitions(i)
		if seen[name] > 1 || n <= 0 {
			continue // duplicates and invalid counts are the controller's to refuse
		}
		var te *quota.ThrottlingError
		if err := p.mq.Record(n); errors.As(err, &te) {
			p.refused[name] = true
			continue
		}
		p.permits[name] = n
	}
	return p
}

// settle gives back the partitions of topics the controller refused and
// hands the throttle time to the request.
func (p *mutationPlan) settle(qr *quotaRequest, failed func(name string) bool) {
	for name, n := range p.permits {
		if failed(name) {
			p.mq.Refund(n)
		}
	}
	qr.throttleMs = max(qr.throttleMs, p.mq.ThrottleTimeMs())
}

func (p *mutationPlan) refundAll(qr *quotaRequest) { p.settle(qr, func(string) bool { return true }) }

func (a mutationQuotaAdmin) CreateTopics(ctx context.Context, req *kmsg.CreateTopicsRequest) (*kmsg.CreateTopicsResponse, error) {
	qr := quotaOf(ctx)
	if qr == nil {
		return a.AdminController.CreateTopics(ctx, req)
	}
	names := make([]string, len(req.Topics))
	for i, t := range req.Topics {
		names[i] = t.Topic
	}
	var img *metadata.Image
	if a.meta != nil {
		img = a.meta.Image()
	}
	p := plan(qr, req.Version >= 6, names, func(i int) float64 {
		t := req.Topics[i]
		if img != nil {
			if _, exists := img.Topic(t.Topic); exists {
				return 0 // TOPIC_ALREADY_EXISTS comes before the quota
			}
		}
		switch {
		case len(t.ReplicaAssignment) > 0:
			return float64(len(t.ReplicaAssignment))
		case t.NumPartitions == -1 && a.cfg != nil:
			return float64(a.cfg.Int(config.NumPartitions))
		}
		return float64(t.NumPartitions)
	})
	sub := *req
	sub.Topics = slices.DeleteFunc(slices.Clone(req.Topics), func(t kmsg.CreateTopicsRequestTopic) bool { return p.refused[t.Topic] })
	resp := kmsg.NewPtrCreateTopicsResponse()
	if len(sub.Topics) > 0 {
		var err error
		if resp, err = a.AdminController.CreateTopics(ctx, &sub); err != nil {
			p.refundAll(qr)
			return nil, err
		}
	}
	codes := map[string]int16{}
	for _, t := range resp.Topics {
		codes[t.Topic] = t.ErrorCode
	}
	p.settle(qr, func(n string) bool { return codes[n] != 0 })
	for _, t := range req.Topics {
		if p.refused[t.Topic] {
			rt := kmsg.NewCreateTopicsResponseTopic()
			rt.Topic, rt.ErrorCode, rt.ErrorMessage = t.Topic, kerr.ThrottlingQuotaExceeded.Code, throttledMessage()
			rt.NumPartitions, rt.ReplicationFactor = -1, -1
			resp.Topics = append(resp.Topics, rt)
		}
	}
	return resp, nil
}

func (a mutationQuotaAdmin) DeleteTopics(ctx context.Context, req *kmsg.DeleteTopicsRequest) (*kmsg.DeleteTopicsResponse, error) {
	qr := quotaOf(ctx)
	if qr == nil || a.meta == nil {
		return a.AdminController.DeleteTopics(ctx, req)
	}
	img := a.meta.Image()
	// A topic is named by name (v0-5, and v6 with a name) or by id.
	type target struct {
		name string
		id   [16]byte
	}
	var targets []target
	for _, n := range req.TopicNames {
		targets = append(targets, target{name: n})
	}
	for _, t := range req.Topics {
		tg := target{id: t.TopicID}
		if t.Topic != nil {
			tg.name = *t.Topic
		}
		targets = append(targets, tg)
	}
	keys := make([]string, len(targets))
	for i, tg := range targets {
		keys[i] = tg.name
		if tg.name == "" {
			keys[i] = kafka.UUID(tg.id).String()
		}
	}
	p := plan(qr, req.Version >= 5, keys, func(i int) float64 {
		tg := targets[i]
		if tg.name != "" {
			if t, ok := img.Topic(tg.name); ok {
				return float64(len(t.Partitions))
			}
			return 0
		}
		if t, ok := img.TopicByID(kafka.UUID(tg.id)); ok {
			return float64(len(t.Partitions))
		}
		return 0
	})
	sub := *req
	sub.TopicNames, sub.Topics = nil, nil
	for _, n := range req.TopicNames {
		if !p.refused[n] {
			sub.TopicNames = append(sub.TopicNames, n)
		}
	}
	var refusedTopics []kmsg.DeleteTopicsRequestTopic
	for i, t := range req.Topics {
		if p.refused[keys[len(req.TopicNames)+i]] {
			refusedTopics = append(refusedTopics, t)
		} else {
			sub.Topics = append(sub.Topics, t)
		}
	}
	resp := kmsg.NewPtrDeleteTopicsResponse()
	if len(sub.TopicNames)+len(sub.Topics) > 0 {
		var err error
		if resp, err = a.AdminController.DeleteTopics(ctx, &sub); err != nil {
			p.refundAll(qr)
			return nil, err
		}
	}
	codes := map[string]int16{}
	for _, t := range resp.Topics {
		if t.Topic != nil {
			codes[*t.Topic] = t.ErrorCode
		}
		codes[kafka.UUID(t.TopicID).String()] = t.ErrorCode
	}
	p.settle(qr, func(n string) bool { return codes[n] != 0 })
	add := func(name *string, id [16]byte) {
		rt := kmsg.NewDeleteTopicsResponseTopic()
		rt.Topic, rt.TopicID, rt.ErrorCode, rt.ErrorMessage = name, id, kerr.ThrottlingQuotaExceeded.Code, throttledMessage()
		resp.Topics = append(resp.Topics, rt)
	}
	for _, n := range req.TopicNames {
		if p.refused[n] {
			add(&n, [16]byte{})
		}
	}
	for _, t := range refusedTopics {
		add(t.Topic, t.TopicID)
	}
	return resp, nil
}

func (a mutationQuotaAdmin) CreatePartitions(ctx context.Context, req *kmsg.CreatePartitionsRequest) (*kmsg.CreatePartitionsResponse, error) {
	qr := quotaOf(ctx)
	if qr == nil || a.meta == nil {
		return a.AdminController.CreatePartitions(ctx, req)
	}
	img := a.meta.Image()
	names := make([]string, len(req.Topics))
	for i, t := range req.Topics {
		names[i] = t.Topic
	}
	p := plan(qr, req.Version >= 3, names, func(i int) float64 {
		t := req.Topics[i]
		cur, ok := img.Topic(t.Topic)
		if !ok {
			return 0
		}
		return float64(int(t.Count) - len(cur.Partitions))
	})
	sub := *req
	sub.Topics = slices.DeleteFunc(slices.Clone(req.Topics), func(t kmsg.CreatePartitionsRequestTopic) bool { return p.refused[t.Topic] })
	resp := kmsg.NewPtrCreatePartitionsResponse()
	if len(sub.Topics) > 0 {
		var err error
		if resp, err = a.AdminController.CreatePartitions(ctx, &sub); err != nil {
			p.refundAll(qr)
			return nil, err
		}
	}
	codes := map[string]int16{}
	for _, t := range resp.Topics {
		codes[t.Topic] = t.ErrorCode
	}
	p.settle(qr, func(n string) bool { return codes[n] != 0 })
	for _, t := range req.Topics {
		if p.refused[t.Topic] {
			rt := kmsg.NewCreatePartitionsResponseTopic()
			rt.Topic, rt.ErrorCode, rt.ErrorMessage = t.Topic, kerr.ThrottlingQuotaExceeded.Code, throttledMessage()
			resp.Topics = append(resp.Topics, rt)
		}
	}
	return resp, nil
}
