package sim

import (
	"context"
	"fmt"
	"hash"
	"strconv"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/controller"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/quorum"
)

// proposeRequest is an operation's proposal handed to the sim goroutine,
// with the offset of the image its records were computed on.
type proposeRequest struct {
	data        []byte
	imageOffset int64
	reply       chan proposeReply
}

type proposeReply struct {
	offset int64
	err    error
}

// stepProposer is the controller.Proposer of a node's Runner in the
// simulation (a real node's is the Driver): it hands the proposal to the
// sim goroutine, which proposes it on the voter and answers when the voter
// reports the outcome.
type stepProposer struct {
	sim  *Sim
	node *node
}

func (p *stepProposer) ProposeAfter(_ context.Context, data []byte, imageOffset int64) (int64, error) {
	reply := make(chan proposeReply, 1)
	p.sim.opReq <- proposeRequest{data: data, imageOffset: imageOffset, reply: reply}
	r := <-reply
	return r.offset, r.err
}

// run runs one controller operation on a node's Runner.
func run[R any](ctx context.Context, r *controller.Runner, op func(*metadata.Image) ([]metadata.Record, R)) (R, error) {
	resp, _, err := controller.Run(ctx, r, op)
	return resp, err
}

// runOp runs one controller operation on a node through its Runner and
// waits for it: the operation's goroutine either returns or proposes, and
// for each proposal the sim steps the cluster (faults included) until the
// voter reports its outcome. A proposal committed and applied is
// acknowledged: its record must survive to the end.
func (s *Sim) runOp(n *node, name string, op func(ctx context.Context, ex *controller.Runner) error) error {
	done := make(chan error, 1)
	go func() { done <- op(context.Background(), n.runner) }()
	for {
		select {
		case err := <-done:
			if err == nil {
				s.stats.AckedOps++
			} else {
				s.stats.FailedOps++
			}
			s.event("op %s on %d: %v", name, n.id, err)
			return err
		case req := <-s.opReq:
			s.propose(n, req)
		}
	}
}

// propose runs one proposal of an operation to its outcome.
func (s *Sim) propose(n *node, req proposeRequest) {
	var result *proposeReply
	if !n.up {
		result = &proposeReply{offset: -1, err: quorum.ErrStopped}
	} else {
		n.voter.ProposeAfter(req.data, req.imageOffset, func(offset int64, err error) { result = &proposeReply{offset: offset, err: err} })
		s.process(n)
	}
	for steps := 0; result == nil; steps++ {
		if (steps > 1000 || s.violation != nil) && n.up {
			// Stuck behind a partition (or the run already failed): the
			// crash that ends it is a fault like any other.
			s.crash(n)
			s.stats.Crashes++
			s.event("crash %d (stuck proposal)", n.id)
			continue
		}
		if !s.cfg.NoFaults && !s.settling {
			s.faults()
		}
		s.step()
	}
	if result.err == nil {
		s.acked[result.offset] = string(req.data)
	}
	req.reply <- *result
}

// workload starts a random controller operation on the leader now and then.
func (s *Sim) workload() {
	if s.rng.Float64() >= 0.2 {
		return
	}
	n := s.leader()
	if n == nil {
		return
	}
	im := n.loader.Image()
	var name string
	var op func(context.Context, *controller.Runner) error
	switch {
	case im.ClusterID() == "":
		name, op = "bootstrap", s.opBootstrap()
	case len(im.BrokerIDs()) < 3 || s.rng.IntN(20) == 0:
		b := int32(s.rng.IntN(3))
		name, op = "register-"+strconv.Itoa(int(b)), s.opRegister(b)
	default:
		switch s.rng.IntN(4) {
		case 0, 1:
			t := "t" + strconv.Itoa(s.rng.IntN(40))
			name, op = "create-"+t, s.opCreate(t, int32(1+s.rng.IntN(3)))
		case 2:
			t := "t" + strconv.Itoa(s.rng.IntN(40))
			name, op = "delete-"+t, s.opDelete(t)
		default:
			t := "t" + strconv.Itoa(s.rng.IntN(40))
			name, op = "config-"+t, s.opConfig(t, strconv.Itoa(s.rng.IntN(1000)))
		}
	}
	s.runOp(n, name, op)
}

func (s *Sim) opBootstrap() func(context.Context, *controller.Runner) error {
	return func(ctx context.Context, ex *controller.Runner) error {
		_, err := run(ctx, ex, func(im *metadata.Image) ([]metadata.Record, struct{}) {
			if im.ClusterID() != "" {
				return nil, struct{}{}
			}
			return metadata.BootstrapRecords("sim-cluster", 1), struct{}{}
		})
		return err
	}
}

// opRegister registers a broker and unfences it.
func (s *Sim) opRegister(id int32) func(context.Context, *controller.Runner) error {
	incarnation := s.topicID()
	return func(ctx context.Context, ex *controller.Runner) error {
		req := kmsg.NewPtrBrokerRegistrationRequest()
		req.BrokerID, req.ClusterID, req.IncarnationID = id, "sim-cluster", incarnation
		resp, err := run(ctx, ex, func(im *metadata.Image) ([]metadata.Record, *kmsg.BrokerRegistrationResponse) {
			return s.ctrl.RegisterBroker(im, req)
		})
		if err != nil {
			return err
		}
		if resp.ErrorCode != 0 {
			return fmt.Errorf("register: error code %d", resp.ErrorCode)
		}
		_, err = controller.Apply(ctx, ex, func(im *metadata.Image) ([]metadata.Record, error) {
			return s.ctrl.UnfenceBroker(im, id, resp.BrokerEpoch)
		})
		return err
	}
}

func (s *Sim) opCreate(topic string, partitions int32) func(context.Context, *controller.Runner) error {
	return func(ctx context.Context, ex *controller.Runner) error {
		req := kmsg.NewPtrCreateTopicsRequest()
		t := kmsg.NewCreateTopicsRequestTopic()
		t.Topic, t.NumPartitions, t.ReplicationFactor = topic, partitions, 1
		req.Topics = append(req.Topics, t)
		_, err := run(ctx, ex, func(im *metadata.Image) ([]metadata.Record, *kmsg.CreateTopicsResponse) {
			return s.ctrl.CreateTopics(im, req)
		})
		return err
	}
}

func (s *Sim) opDelete(topic string) func(context.Context, *controller.Runner) error {
	return func(ctx context.Context, ex *controller.Runner) error {
		req := kmsg.NewPtrDeleteTopicsRequest()
		name := topic
		t := kmsg.NewDeleteTopicsRequestTopic()
		t.Topic = &name
		req.Topics = append(req.Topics, t)
		req.TopicNames = append(req.TopicNames, topic)
		_, err := run(ctx, ex, func(im *metadata.Image) ([]metadata.Record, *kmsg.DeleteTopicsResponse) {
			return s.ctrl.DeleteTopics(im, req)
		})
		return err
	}
}

func (s *Sim) opConfig(topic, value string) func(context.Context, *controller.Runner) error {
	return func(ctx context.Context, ex *controller.Runner) error {
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		r := kmsg.NewIncrementalAlterConfigsRequestResource()
		r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeTopic, topic
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value = "retention.ms", &value
		r.Configs = append(r.Configs, c)
		req.Resources = append(req.Resources, r)
		_, err := run(ctx, ex, func(im *metadata.Image) ([]metadata.Record, *kmsg.IncrementalAlterConfigsResponse) {
			return s.ctrl.IncrementalAlterConfigs(im, req)
		})
		return err
	}
}

// opProbe writes a cluster config record, so a settled leader commits.
func (s *Sim) opProbe(i int) func(context.Context, *controller.Runner) error {
	value := strconv.Itoa(i)
	return func(ctx context.Context, ex *controller.Runner) error {
		_, err := run(ctx, ex, func(*metadata.Image) ([]metadata.Record, struct{}) {
			return []metadata.Record{&metadata.ConfigRecord{ResourceType: metadata.ConfigResourceBroker, Name: "sim.probe", Value: &value}}, struct{}{}
		})
		return err
	}
}

// faults crash, restart, partition and heal at random.
func (s *Sim) faults() {
	r := s.rng.Float64()
	switch {
	case r < 0.004:
		n := s.nodes[s.ids[s.rng.IntN(len(s.ids))]]
		if n.up {
			s.crash(n)
			s.stats.Crashes++
			s.event("crash %d", n.id)
		}
	case r < 0.016:
		for _, id := range s.ids {
			if n := s.nodes[id]; !n.up {
				if err := s.start(n); err != nil {
					s.fail("restart %d: %v", id, err)
				}
				s.event("restart %d", id)
				break
			}
		}
	case r < 0.020:
		perm := s.rng.Perm(len(s.ids))
		k := 1 + s.rng.IntN(len(s.ids)/2)
		var a, b []int32
		for i, p := range perm {
			if i < k {
				a = append(a, s.ids[p])
			} else {
				b = append(b, s.ids[p])
			}
		}
		s.net.partition(a, b)
		s.stats.Partitions++
		s.event("partition %v | %v", a, b)
	case r < 0.030:
		s.net.heal()
		s.event("heal")
	}
}

// topicID draws ids from the seeded PRNG, so runs repeat.
func (s *Sim) topicID() kafka.UUID {
	var id kafka.UUID
	for i := range id {
		id[i] = byte(s.rng.UintN(256))
	}
	return id
}

// anyConfig accepts every config; validation is not under test here.
type anyConfig struct{}

func (anyConfig) Validate(metadata.ConfigResource, map[string]string) error { return nil }
func (anyConfig) IsList(metadata.ConfigResourceType, string) bool           { return false }
func (anyConfig) Default(metadata.ConfigResourceType, string) string        { return "" }

// hashWriter feeds the trace into a hash.
type hashWriter struct{ h hash.Hash64 }

func (w *hashWriter) Write(p []byte) (int, error) { return w.h.Write(p) }
