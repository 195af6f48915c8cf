package replication

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/records/recordstest"
	"github.com/sluice-io/sluice/internal/testutil"
)

var simSeed = flag.Uint64("sim.seed", 0, "run the replication simulation with this seed only")

// TestReplicationUnderFaults runs seeded fault schedules over a 3-broker
// cluster (RF 3, min.insync.replicas 2) with acks=all producers, then heals
// everything and checks: the high watermark never went back within a
// leader epoch, all replicas hold identical logs, and every acknowledged
// value is in the log exactly once at the offset it was acknowledged with.
// A failure names its seed; -sim.seed=N replays the schedule's choices
// (timing still varies).
func TestReplicationUnderFaults(t *testing.T) {
	seeds := []uint64{1, 2, 3}
	run := 2 * time.Second
	if testing.Short() {
		seeds, run = seeds[:1], time.Second
	}
	if *simSeed != 0 {
		seeds = []uint64{*simSeed}
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { runReplicationSim(t, seed, run) })
	}
}

type ackedValue struct {
	value  string
	offset int64
}

type hwKey struct {
	broker int32
	tp     kafka.TopicPartition
	epoch  int32
}

func runReplicationSim(t *testing.T, seed uint64, run time.Duration) {
	c := newSimCluster(t, seed, 3, 3, true)
	stop := make(chan struct{})
	var wg sync.WaitGroup

	var ackMu sync.Mutex
	acked := make(map[int32][]ackedValue)
	// Two producers per partition keep several appends in flight, so a
	// leader that fails leaves an unreplicated tail to truncate.
	for p := range c.nParts {
		for producer := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.produceLoop(t, p, producer, stop, func(v ackedValue) {
					ackMu.Lock()
					acked[p] = append(acked[p], v)
					ackMu.Unlock()
				})
			}()
		}
	}

	var violations []string
	wg.Add(1)
	go func() {
		defer wg.Done()
		violations = c.watchHighWatermarks(stop)
	}()

	faults := c.injectFaults(run)
	close(stop)
	wg.Wait()
	c.healAll()
	c.awaitConverged()

	if len(violations) > 0 {
		c.fatalf("high watermark went back: %v", violations)
	}
	total := 0
	for p := range c.nParts {
		logs := c.replicaLogs(p)
		for id, l := range logs {
			if !slices.EqualFunc(l, logs[c.leaderOf(p)], bytes.Equal) {
				c.fatalf("partition %d: replica %d's log differs from the leader's", p, id)
			}
		}
		values := decodeValues(t, logs[c.leaderOf(p)])
		seen := make(map[string]int)
		for _, v := range values {
			seen[v]++
		}
		for _, a := range acked[p] {
			if a.offset >= int64(len(values)) || values[a.offset] != a.value {
				c.fatalf("partition %d: acknowledged %q at offset %d lost", p, a.value, a.offset)
			}
			if seen[a.value] != 1 {
				c.fatalf("partition %d: acknowledged %q appears %d times", p, a.value, seen[a.value])
			}
		}
		total += len(acked[p])
	}
	t.Logf("seed %d: %d faults injected, %d values acknowledged, 0 lost, 0 duplicated", seed, faults, total)
	if total < 30 {
		c.fatalf("only %d values acknowledged: the workload made no progress", total)
	}
}

// produceLoop sends one unique value at a time with acks=all to a broker
// that believes it leads partition p (a zombie leader included).
func (c *simCluster) produceLoop(t *testing.T, p int32, producer int, stop <-chan struct{}, ack func(ackedValue)) {
	tp := kafka.TopicPartition{Topic: c.topic, Partition: p}
	for seq := 0; ; seq++ {
		select {
		case <-stop:
			return
		default:
		}
		var leaders []*ReplicaManager
		c.mu.Lock()
		for _, b := range c.mu.brokers {
			if part, err := b.rm.Partition(tp); err == nil && part.State().Role == RoleLeader {
				leaders = append(leaders, b.rm)
			}
		}
		var rm *ReplicaManager
		if len(leaders) > 0 {
			rm = leaders[c.mu.rng.IntN(len(leaders))]
		}
		c.mu.Unlock()
		if rm == nil {
			time.Sleep(5 * time.Millisecond) // a client's backoff while no broker leads
			continue
		}
		value := fmt.Sprintf("p%d-%d-%d", p, producer, seq)
		data, err := recordstest.Build(recordstest.Values(time.Now().UnixMilli(), value))
		if err != nil {
			t.Errorf("build batch: %v", err)
			return
		}
		res := rm.AppendRecords(t.Context(), AppendRequest{RequiredAcks: -1, Timeout: 300 * time.Millisecond,
			ProduceVersion: 11, Partitions: []AppendPartition{{TP: tp, Records: data}}})
		if res[0].Err == nil {
			ack(ackedValue{value: value, offset: res[0].FirstOffset})
		} else {
			time.Sleep(2 * time.Millisecond) // a client's retry backoff
		}
	}
}

// watchHighWatermarks samples every leader's high watermark until stop and
// returns the times one went back within a leader epoch.
func (c *simCluster) watchHighWatermarks(stop <-chan struct{}) []string {
	last := make(map[hwKey]int64)
	var violations []string
	for {
		select {
		case <-stop:
			return violations
		case <-time.After(3 * time.Millisecond):
		}
		c.mu.Lock()
		for id, b := range c.mu.brokers {
			for _, p := range b.rm.Partitions() {
				st := p.State()
				if st.Role != RoleLeader {
					continue
				}
				k := hwKey{broker: id, tp: p.TopicPartition(), epoch: st.LeaderEpoch}
				if prev, ok := last[k]; ok && st.HighWatermark < prev {
					violations = append(violations, fmt.Sprintf("%+v: %d after %d", k, st.HighWatermark, prev))
				}
				last[k] = st.HighWatermark
			}
		}
		c.mu.Unlock()
	}
}

// injectFaults runs a seeded schedule of crashes, isolations and cut links
// for d, one fault at a time, and returns how many it injected.
func (c *simCluster) injectFaults(d time.Duration) int {
	deadline := time.Now().Add(d)
	faults := 0
	var undo func()
	for time.Now().Before(deadline) {
		c.mu.Lock()
		pause := time.Duration(30+c.mu.rng.IntN(150)) * time.Millisecond
		kind := c.mu.rng.IntN(3)
		victim := int32(1 + c.mu.rng.IntN(3))
		other := int32(1 + c.mu.rng.IntN(3))
		c.mu.Unlock()
		time.Sleep(pause) // the schedule: each fault lasts a seeded while
		if undo != nil {
			undo()
			undo = nil
			continue
		}
		faults++
		switch kind {
		case 0:
			c.crash(victim)
			undo = func() { c.restart(victim) }
		case 1:
			c.isolate(victim)
			undo = func() { c.heal(victim) }
		default:
			if other == victim {
				other = victim%3 + 1
			}
			c.setCut(victim, other, true)
			undo = func() { c.setCut(victim, other, false) }
		}
	}
	if undo != nil {
		undo()
	}
	return faults
}

func (c *simCluster) setCut(follower, leader int32, cut bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cut {
		c.mu.cut[[2]int32{follower, leader}] = true
	} else {
		delete(c.mu.cut, [2]int32{follower, leader})
	}
}

// healAll restarts crashed brokers, heals isolated ones and restores links.
func (c *simCluster) healAll() {
	c.mu.Lock()
	clear(c.mu.cut)
	var down, isolated []int32
	for id := range c.mu.downFS {
		down = append(down, id)
	}
	for id := range c.mu.isolated {
		isolated = append(isolated, id)
	}
	c.mu.Unlock()
	for _, id := range down {
		c.restart(id)
	}
	for _, id := range isolated {
		c.heal(id)
	}
}

func (c *simCluster) leaderOf(p int32) int32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, _ := c.mu.image.Partition(kafka.TopicPartition{Topic: c.topic, Partition: p})
	return st.Leader
}

// awaitConverged waits until every partition has a leader whose ISR holds
// every replica and whose high watermark is every replica's log end offset.
func (c *simCluster) awaitConverged() {
	c.t.Helper()
	testutil.EventuallyNoError(c.t, 20*time.Second, func() error {
		if why := c.notConverged(); why != "" {
			return errors.New(why)
		}
		return nil
	}, "seed %d: cluster converges", c.seed)
}

func (c *simCluster) notConverged() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	for p := range c.nParts {
		tp := kafka.TopicPartition{Topic: c.topic, Partition: p}
		st, _ := c.mu.image.Partition(tp)
		if st.Leader < 0 {
			return fmt.Sprintf("%s has no leader", tp)
		}
		if len(st.ISR) != len(st.Replicas) {
			return fmt.Sprintf("%s ISR %v of replicas %v", tp, st.ISR, st.Replicas)
		}
		lp, err := c.mu.brokers[st.Leader].rm.Partition(tp)
		if err != nil {
			return err.Error()
		}
		ls := lp.State()
		if ls.HighWatermark != ls.LogEndOffset {
			return fmt.Sprintf("%s leader high watermark %d, log end offset %d", tp, ls.HighWatermark, ls.LogEndOffset)
		}
		for _, r := range st.Replicas {
			fp, err := c.mu.brokers[r].rm.Partition(tp)
			if err != nil {
				return err.Error()
			}
			if fs := fp.State(); fs.LogEndOffset != ls.LogEndOffset || fs.HighWatermark != ls.HighWatermark || fs.LeaderEpoch != ls.LeaderEpoch {
				return fmt.Sprintf("%s replica %d at %d/%d epoch %d, leader at %d/%d epoch %d", tp, r,
					fs.LogEndOffset, fs.HighWatermark, fs.LeaderEpoch, ls.LogEndOffset, ls.HighWatermark, ls.LeaderEpoch)
			}
		}
	}
	return ""
}

// replicaLogs returns each replica's batches of partition p.
func (c *simCluster) replicaLogs(p int32) map[int32][][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	tp := kafka.TopicPartition{Topic: c.topic, Partition: p}
	out := make(map[int32][][]byte)
	for id, b := range c.mu.brokers {
		part, err := b.rm.Partition(tp)
		if err != nil {
			continue
		}
		l := part.Log()
		var batches [][]byte
		for off := l.LogStartOffset(); off < l.LogEndOffset(); {
			res, err := l.Read(off, 1<<20, l.LogEndOffset(), true)
			if err != nil {
				c.fatalf("read broker %d %s at %d: %v", id, tp, off, err)
			}
			data, err := res.Bytes()
			if err != nil {
				c.fatalf("read broker %d %s at %d: %v", id, tp, off, err)
			}
			if _, err := records.Batches(data, func(h records.Header, b []byte) error {
				batches = append(batches, slices.Clone(b))
				off = h.NextOffset()
				return nil
			}); err != nil {
				c.fatalf("parse broker %d %s: %v", id, tp, err)
			}
		}
		out[id] = batches
	}
	return out
}

// decodeValues returns the value at each offset of a log that starts at 0
// and has no gaps (no compaction here).
func decodeValues(t *testing.T, batches [][]byte) []string {
	var out []string
	for _, b := range batches {
		h, err := records.ParseHeader(b)
		if err != nil {
			t.Fatal(err)
		}
		if err := records.ForEachRecord(b, func(r records.Record) error {
			if r.Offset(h) != int64(len(out)) {
				return fmt.Errorf("record at %d, want %d", r.Offset(h), len(out))
			}
			out = append(out, string(r.Value))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	return out
}
