package workload

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/verify/history"
)

// Consumer is one member of cfg.Group reading cfg.Topic from the earliest
// offset. It records a Poll op per record it polls (the records of one
// poll share a Batch), an Assign op on every change of its assignment,
// and a Commit op per partition whose offset commit was acknowledged.
// Kill makes it vanish without leaving; nothing is recorded after.
type Consumer struct {
	Process string
	// Protocol is "classic" or "consumer" (KIP-848).
	Protocol string
	Client   *kgo.Client
	rec      *history.Recorder
	cfg      Config
	dialer   *cutDialer

	batch  atomic.Int64
	killed atomic.Bool
	// commitMu keeps one commit of this member at a time, its offsets read
	// under it: kgo serializes CommitOffsetsSync calls but takes the offsets
	// given at the call, so two calls (the poll loop and the revocation
	// callback) could send the older offsets last and move the group's
	// committed offset back (a soak saw it). Taken with TryLock only: a
	// commit skipped here is made by the next one, and a callback never
	// waits on the poll loop's commit (which may wait for a rebalance).
	commitMu sync.Mutex
	mu       sync.Mutex
	// Invariant: assigned is the partitions of cfg.Topic the member owns
	// as its callbacks last told it.
	assigned map[int32]bool
	// stopped is closed when Run returns.
	stopped chan struct{}
}

// NewConsumer joins cfg.Group as process; kip848 selects the consumer
// protocol (kgo.ServerSideBalancer with the uniform assignor) over the
// classic one. opts are added to the client's (a transactional reader
// adds kgo.FetchIsolationLevel(kgo.ReadCommitted())).
func NewConsumer(cfg Config, process string, rec *history.Recorder, kip848 bool, opts ...kgo.Opt) (*Consumer, error) {
	cfg = cfg.withDefaults()
	c := &Consumer{Process: process, Protocol: "classic", rec: rec, cfg: cfg,
		assigned: make(map[int32]bool), stopped: make(chan struct{})}
	all := []kgo.Opt{
		kgo.ConsumerGroup(cfg.Group),
		kgo.ConsumeTopics(cfg.Topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(),
		kgo.SessionTimeout(cfg.SessionTimeout),
		kgo.OnPartitionsAssigned(c.onAssigned),
		kgo.OnPartitionsRevoked(c.onRevoked),
		kgo.OnPartitionsLost(c.onLost),
	}
	if kip848 {
		c.Protocol = "consumer"
		all = append(all, kgo.Balancers(kgo.StickyBalancer()), kgo.ServerSideBalancer())
	}
	all, d, err := cuttableOpts(cfg, append(all, opts...))
	if err != nil {
		return nil, fmt.Errorf("consumer %s: %w", process, err)
	}
	c.dialer = d
	if c.Client, err = NewClient(cfg, all...); err != nil {
		return nil, fmt.Errorf("consumer %s: %w", process, err)
	}
	return c, nil
}

// Run polls, records and commits until ctx is done or the client closes.
func (c *Consumer) Run(ctx context.Context) {
	defer close(c.stopped)
	for ctx.Err() == nil {
		fs := c.Client.PollFetches(ctx)
		if fs.IsClientClosed() {
			return
		}
		fs.EachError(func(t string, p int32, err error) {
			if ctx.Err() == nil && !c.killed.Load() {
				c.cfg.Log.Debug("poll error", "process", c.Process, "topic", t, "partition", p, "err", err)
			}
		})
		if fs.NumRecords() == 0 || c.killed.Load() {
			continue
		}
		c.recordPoll(fs)
		c.commit(ctx, c.Client)
	}
}

func (c *Consumer) recordPoll(fs kgo.Fetches) {
	b := c.batch.Add(1)
	fs.EachRecord(func(r *kgo.Record) {
		if c.killed.Load() {
			return
		}
		c.rec.Record(history.Op{Kind: history.Poll, Process: c.Process, Topic: r.Topic,
			Partition: r.Partition, Offset: r.Offset, Value: string(r.Value), Batch: b})
	})
}

// commit commits what was polled and records the partitions whose commit
// the coordinator acknowledged without error. The group callbacks pass
// their client: they may run before NewClient has returned it.
func (c *Consumer) commit(ctx context.Context, cl *kgo.Client) {
	if !c.commitMu.TryLock() {
		return
	}
	defer c.commitMu.Unlock()
	offsets := cl.UncommittedOffsets()
	if len(offsets) == 0 {
		return
	}
	start := c.cfg.Clock.Now()
	cl.CommitOffsetsSync(ctx, offsets, func(_ *kgo.Client, req *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		if err != nil || c.killed.Load() {
			return
		}
		c.recordCommits(req, resp, c.cfg.Clock.Now().Sub(start))
	})
}

func (c *Consumer) recordCommits(req *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, lat time.Duration) {
	sent := make(map[string]map[int32]int64)
	for _, t := range req.Topics {
		sent[t.Topic] = make(map[int32]int64)
		for _, p := range t.Partitions {
			sent[t.Topic][p.Partition] = p.Offset
		}
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			off, ok := sent[t.Topic][p.Partition]
			if p.ErrorCode != 0 || !ok {
				continue
			}
			c.rec.Record(history.Op{Kind: history.Commit, Process: c.Process, Topic: t.Topic,
				Partition: p.Partition, Offset: off, Group: req.Group, Generation: req.Generation, Latency: lat})
		}
	}
}

func (c *Consumer) onAssigned(_ context.Context, cl *kgo.Client, m map[string][]int32) {
	c.changeAssignment(cl, "assigned", m[c.cfg.Topic], true)
}

func (c *Consumer) onRevoked(ctx context.Context, cl *kgo.Client, m map[string][]int32) {
	// Commit what was polled before the partitions move, so their next
	// owner starts after it (kgo's advice with autocommit off).
	if !c.killed.Load() {
		c.commit(ctx, cl)
	}
	c.changeAssignment(cl, "revoked", m[c.cfg.Topic], false)
}

func (c *Consumer) onLost(_ context.Context, cl *kgo.Client, m map[string][]int32) {
	c.changeAssignment(cl, "lost", m[c.cfg.Topic], false)
}

// changeAssignment applies a callback's change and records the member's
// whole assignment after it.
func (c *Consumer) changeAssignment(cl *kgo.Client, how string, parts []int32, add bool) {
	c.mu.Lock()
	for _, p := range parts {
		if add {
			c.assigned[p] = true
		} else {
			delete(c.assigned, p)
		}
	}
	now := make([]int32, 0, len(c.assigned))
	for p := range c.assigned {
		now = append(now, p)
	}
	c.mu.Unlock()
	if c.killed.Load() {
		return
	}
	slices.Sort(now)
	_, gen := cl.GroupMetadata()
	c.rec.Record(history.Op{Kind: history.Assign, Process: c.Process, Topic: c.cfg.Topic,
		Offset: -1, Group: c.cfg.Group, Generation: gen, Partitions: now,
		Detail: fmt.Sprintf("%s %v (%s protocol)", how, parts, c.Protocol)})
}

// Leave commits, leaves the group (LeaveGroup, or a KIP-848 leave
// heartbeat) and closes the client, waiting up to timeout.
func (c *Consumer) Leave(timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := c.Client.LeaveGroupContext(ctx); err != nil {
		c.cfg.Log.Warn("leave group", "process", c.Process, "err", err)
	}
	c.Client.Close()
}

// Kill cuts the member's connections and refuses new ones, so it never
// leaves the group: the coordinator finds out when its session times out.
// Nothing it does afterwards is recorded; its client is closed in the
// background (its LeaveGroup cannot get out).
func (c *Consumer) Kill() {
	c.killed.Store(true)
	c.dialer.Cut()
	go c.Client.Close()
}
