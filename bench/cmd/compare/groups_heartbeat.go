package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	hbPeriodMs       = 5000 // Kafka's group.consumer.heartbeat.interval.ms default, used on both
	hbJoinSpreadSecs = 5
	hbWindowSecs     = 30
	hbClients        = 4
	hbTopic          = "heartbeat-idle"
	hbSettleTimeout  = 3 * time.Minute
)

// heartbeatRun measures the broker's CPU idle, then with the 1,000 members heartbeating.
func (s *suite) heartbeatRun(ctx context.Context, b broker, sys system, round int) error {
	if ok, why := kip848Support(ctx, b.Bootstrap()); !ok {
		s.res.fail(rowHBCPU, sys, round, why)
		s.log.Warn("heartbeat row not run", "system", sys, "reason", why)
		return nil
	}
	if err := createTopic(ctx, b, hbTopic, hbPartitions); err != nil {
		return err
	}
	idle, err := cpuWindow(ctx, b.PID(), hbWindowSecs*time.Second)
	if err != nil {
		return err
	}
	rssBefore, err := rssBytes(b.PID())
	if err != nil {
		return err
	}
	f, err := newHBFleet(b.Bootstrap(), time.Duration(hbPeriodMs)*time.Millisecond)
	if err != nil {
		return err
	}
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		stop()
		wg.Wait()
		f.close()
	}()
	joined := time.Now()
	f.start(runCtx, &wg)
	if err := f.waitSteady(ctx, hbSettleTimeout); err != nil {
		s.res.fail(rowHBCPU, sys, round, err.Error())
		return nil
	}
	s.log.Info("heartbeat members steady", "system", sys, "after", time.Since(joined).Round(time.Millisecond))
	before := f.snapshot()
	busy, err := cpuWindow(ctx, b.PID(), hbWindowSecs*time.Second)
	if err != nil {
		return err
	}
	after := f.snapshot()
	rss, err := rssBytes(b.PID())
	if err != nil {
		return err
	}
	l := load()
	s.res.add(rowHBBaseCPU, sys, round, idle*1e3, l)
	s.res.add(rowHBCPU, sys, round, busy*1e3, l)
	s.res.add(rowHBCPUOver, sys, round, (busy-idle)*1e3, l)
	s.res.add(rowHBRate, sys, round, float64(after.ok-before.ok)/hbWindowSecs, l)
	s.res.add(rowHBRSS, sys, round, float64(rss)/(1<<20), l)
	s.res.add(rowHBRSSOver, sys, round, float64(rss-rssBefore)/(1<<20), l)
	s.res.note("round %d %s heartbeats: %s", round, sys, describeHBWindow(before, after))
	s.log.Info("heartbeat cost", "system", sys, "idle_cpu_ms_s", idle*1e3, "busy_cpu_ms_s", busy*1e3, "rss_mib", rss>>20, "window", describeHBWindow(before, after))
	return nil
}

// cpuWindow returns the process's CPU seconds per second over d.
func cpuWindow(ctx context.Context, pid int, d time.Duration) (float64, error) {
	c0, err := cpuSeconds(pid)
	if err != nil {
		return 0, err
	}
	t0 := time.Now()
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(d):
	}
	c1, err := cpuSeconds(pid)
	if err != nil {
		return 0, err
	}
	return (c1 - c0) / time.Since(t0).Seconds(), nil
}

func rssBytes(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("open status of pid %d: %w", pid, err)
	}
	defer f.Close()
	return parseStatusKB(f, "VmRSS")
}

// parseStatusKB reads a "Name:   N kB" line of /proc/PID/status, in bytes.
func parseStatusKB(r io.Reader, name string) (int64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), name+":")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, fmt.Errorf("unexpected %s line %q", name, sc.Text())
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s value %q: %w", name, fields[0], err)
		}
		return kb * 1024, nil
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("read status: %w", err)
	}
	return 0, fmt.Errorf("no %s line in status", name)
}

// hbCounts are the fleet's running totals.
type hbCounts struct {
	ok, failed, changes int64
	errs                map[int16]int64 // error code (-1: no response) to count
	intervals           map[int32]int64 // HeartbeatIntervalMs returned to count
}

// describeHBWindow says what happened between two snapshots, for the notes.
func describeHBWindow(before, after hbCounts) string {
	var errs []string
	for _, code := range slices.Sorted(maps.Keys(after.errs)) {
		if n := after.errs[code] - before.errs[code]; n > 0 {
			errs = append(errs, fmt.Sprintf("%d with error code %d", n, code))
		}
	}
	errText := "none failed"
	if len(errs) > 0 {
		errText = strings.Join(errs, ", ")
	}
	var iv []string
	for _, ms := range slices.Sorted(maps.Keys(after.intervals)) {
		iv = append(iv, fmt.Sprintf("%d ms", ms))
	}
	return fmt.Sprintf("%d answered in the %d s window (%s), %d assignment changes in it; heartbeat interval returned by the broker: %s (the members send every %d ms)",
		after.ok-before.ok, hbWindowSecs, errText, after.changes-before.changes, strings.Join(iv, ", "), hbPeriodMs)
}

// hbMember is one emulated consumer-protocol member.
type hbMember struct {
	group, id string
	epoch     int32
	owned     []kmsg.ConsumerGroupHeartbeatRequestTopic
	ownedKey  string
	ack       bool // the next heartbeat reports owned (a new assignment was taken)
}

// hbFleet is the 1,000 members and the clients their requests go through.
type hbFleet struct {
	clients []*kgo.Client
	period  time.Duration

	mu         sync.Mutex
	members    []*hbMember
	counts     hbCounts
	lastChange time.Time
}

func newHBFleet(bootstrap string, period time.Duration) (*hbFleet, error) {
	f := &hbFleet{period: period, counts: hbCounts{errs: map[int16]int64{}, intervals: map[int32]int64{}}}
	for range hbClients {
		cl, err := kgo.NewClient(kgo.SeedBrokers(seeds(bootstrap)...), kgo.RequestRetries(0))
		if err != nil {
			f.close()
			return nil, fmt.Errorf("heartbeat client: %w", err)
		}
		f.clients = append(f.clients, cl)
	}
	for g := range hbGroups {
		for i := range hbMembersPerGroup {
			f.members = append(f.members, &hbMember{group: fmt.Sprintf("bench-hb-%03d", g), id: fmt.Sprintf("bench-hb-%03d-member-%02d-%d", g, i, time.Now().UnixNano())})
		}
	}
	return f, nil
}

func (f *hbFleet) close() {
	for _, cl := range f.clients {
		cl.Close()
	}
}

// start runs every member's loop, their joins spread over hbJoinSpreadSecs.
func (f *hbFleet) start(ctx context.Context, wg *sync.WaitGroup) {
	spread := time.Duration(hbJoinSpreadSecs) * time.Second
	for i, m := range f.members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.loop(ctx, m, f.clients[i%len(f.clients)], spread*time.Duration(i)/time.Duration(len(f.members)))
		}()
	}
}

func (f *hbFleet) loop(ctx context.Context, m *hbMember, cl *kgo.Client, wait time.Duration) {
	for {
		if wait > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
		req := f.request(m)
		sent := time.Now()
		resp, err := req.RequestWith(ctx, cl)
		if ctx.Err() != nil {
			return
		}
		// The period runs from send to send, however long the answer took.
		if wait = f.handle(m, resp, err); wait > 0 {
			wait = time.Until(sent.Add(wait))
		}
	}
}

func (f *hbFleet) request(m *hbMember) *kmsg.ConsumerGroupHeartbeatRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Group, req.MemberID, req.MemberEpoch = m.group, m.id, m.epoch
	req.RebalanceTimeoutMillis = -1
	switch {
	case m.epoch == 0:
		req.RebalanceTimeoutMillis = 60000
		req.SubscribedTopicNames = []string{hbTopic}
		req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	case m.ack:
		req.Topics = append([]kmsg.ConsumerGroupHeartbeatRequestTopic{}, m.owned...)
	}
	return req
}

// handle takes a response and returns how long to wait before the next heartbeat: none
// after a new assignment (the member acknowledges it at once, as clients do).
func (f *hbFleet) handle(m *hbMember, resp *kmsg.ConsumerGroupHeartbeatResponse, err error) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil {
		f.counts.failed++
		f.counts.errs[-1]++
		return f.period
	}
	if resp.ErrorCode != 0 {
		f.counts.failed++
		f.counts.errs[resp.ErrorCode]++
		if resp.ErrorCode == 25 || resp.ErrorCode == 110 { // UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH: rejoin
			m.epoch, m.owned, m.ownedKey, m.ack = 0, nil, "", false
		}
		return f.period
	}
	f.counts.ok++
	f.counts.intervals[resp.HeartbeatIntervalMillis]++
	m.epoch = resp.MemberEpoch
	m.ack = false
	if resp.Assignment != nil {
		if key := assignmentKey(resp.Assignment.Topics); key != m.ownedKey {
			m.owned = ownedTopics(resp.Assignment.Topics)
			m.ownedKey, m.ack = key, true
			f.counts.changes++
			f.lastChange = time.Now()
			return 0
		}
	}
	return f.period
}

// assignmentKey is a canonical form of an assignment, to tell a new one from a repeat.
func assignmentKey(topics []kmsg.ConsumerGroupHeartbeatResponseAssignmentTopic) string {
	parts := make([]string, 0, len(topics))
	for _, t := range topics {
		ps := slices.Sorted(slices.Values(t.Partitions))
		parts = append(parts, fmt.Sprintf("%x:%v", t.TopicID, ps))
	}
	slices.Sort(parts)
	return strings.Join(parts, ";")
}

func ownedTopics(topics []kmsg.ConsumerGroupHeartbeatResponseAssignmentTopic) []kmsg.ConsumerGroupHeartbeatRequestTopic {
	out := make([]kmsg.ConsumerGroupHeartbeatRequestTopic, 0, len(topics))
	for _, t := range topics {
		out = append(out, kmsg.ConsumerGroupHeartbeatRequestTopic{TopicID: t.TopicID, Partitions: slices.Clone(t.Partitions)})
	}
	return out
}

func (f *hbFleet) snapshot() hbCounts {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.counts
	c.errs, c.intervals = maps.Clone(f.counts.errs), maps.Clone(f.counts.intervals)
	return c
}

// waitSteady waits until every member has joined and acknowledged its assignment, every
// group's members hold disjoint partitions covering the topic, and no assignment has
// changed for one heartbeat period.
func (f *hbFleet) waitSteady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		why := f.unsteady(time.Now())
		if why == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the %d members did not reach a steady state in %s: %s", len(f.members), timeout, why)
		case <-t.C:
		}
	}
}

// unsteady says why the fleet is not steady yet, "" when it is.
func (f *hbFleet) unsteady(now time.Time) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	groups := make(map[string][]groupHolding)
	for _, m := range f.members {
		if m.epoch == 0 || m.ack {
			return fmt.Sprintf("member %s not joined or not acknowledged (errors so far: %v)", m.id, f.counts.errs)
		}
		groups[m.group] = append(groups[m.group], groupHolding{partitions: ownedPartitions(m.owned)})
	}
	for g, hs := range groups {
		if !coversOnce(hs, hbPartitions) {
			return "group " + g + " does not hold every partition exactly once"
		}
	}
	if since := now.Sub(f.lastChange); since < f.period {
		return fmt.Sprintf("an assignment changed %s ago", since.Round(time.Millisecond))
	}
	return ""
}

// groupHolding is one member's partitions of the one topic.
type groupHolding struct{ partitions []int32 }

func ownedPartitions(ts []kmsg.ConsumerGroupHeartbeatRequestTopic) []int32 {
	var out []int32
	for _, t := range ts {
		out = append(out, t.Partitions...)
	}
	return out
}

// coversOnce reports whether the holdings hold every partition 0..n-1 exactly once.
func coversOnce(hs []groupHolding, n int) bool {
	seen := make(map[int32]bool, n)
	for _, h := range hs {
		for _, p := range h.partitions {
			if p < 0 || int(p) >= n || seen[p] {
				return false
			}
			seen[p] = true
		}
	}
	return len(seen) == n
}
