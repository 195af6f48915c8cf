// Command groups848 is a franz-go (kgo) member of a KIP-848 consumer group for the interop
// tests: it joins GROUP with the next-generation protocol (kgo.ServerSideBalancer, the
// broker's uniform assignor behind kgo's default cooperative-sticky balancer), consumes
// TOPIC and reports on standard output in the line protocol of the Java scenarios'
// kip848-member (test/interop/java, Kip848MemberScenario):
//
//	assigned TOPIC:P,TOPIC:P   its assignment after every change
//	read TOPIC P OFFSET VALUE
//	committed TOPIC P NEXT     after a successful commit
//	lost TOPIC P               revoked or lost
//
// It exits with status 3 if it is given partitions without having sent a
// ConsumerGroupHeartbeat, or after sending a JoinGroup: kgo falls back to the classic
// protocol silently when the broker does not offer the new one.
//
// It commits what each poll returned before letting a rebalance in (BlockRebalanceOnPoll),
// and runs until its standard input ends; then it leaves the group and exits. kgo's own
// log (info level) goes to standard error: it says when the next-gen protocol is in use.
//
//	go run ./test/interop/groups848 --bootstrap HOST:PORT --topic T --group G --name NAME
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func main() {
	bootstrap := flag.String("bootstrap", "", "broker host:port")
	topic := flag.String("topic", "", "topic to consume")
	group := flag.String("group", "", "consumer group")
	name := flag.String("name", "franz", "client id")
	flag.Parse()
	if *bootstrap == "" || *topic == "" || *group == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*bootstrap, *topic, *group, *name); err != nil {
		fmt.Fprintln(os.Stderr, "groups848:", err)
		os.Exit(1)
	}
}

// protocolWatch notes which group protocol's requests the client wrote.
type protocolWatch struct {
	heartbeat atomic.Bool // ConsumerGroupHeartbeat (KIP-848)
	joinGroup atomic.Bool // classic JoinGroup
}

func (w *protocolWatch) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, _ error) {
	switch kmsg.Key(key) {
	case kmsg.ConsumerGroupHeartbeat:
		w.heartbeat.Store(true)
	case kmsg.JoinGroup:
		w.joinGroup.Store(true)
	}
}

// member holds what the member owns and serialises its report lines.
type member struct {
	mu    sync.Mutex // guards owned
	out   sync.Mutex // one line at a time on stdout
	owned map[string]map[int32]bool
	watch protocolWatch
}

func (m *member) line(format string, args ...any) {
	m.out.Lock()
	defer m.out.Unlock()
	fmt.Fprintf(os.Stdout, format+"\n", args...)
}

// change adds or removes partitions and reports the new assignment; removed ones are lost.
func (m *member) change(parts map[string][]int32, add bool) {
	if add && (!m.watch.heartbeat.Load() || m.watch.joinGroup.Load()) {
		fmt.Fprintln(os.Stderr, "groups848: assigned partitions through the classic protocol, not KIP-848")
		os.Exit(3)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for t, ps := range parts {
		if m.owned[t] == nil {
			m.owned[t] = map[int32]bool{}
		}
		for _, p := range ps {
			if add {
				m.owned[t][p] = true
			} else {
				delete(m.owned[t], p)
				m.line("lost %s %d", t, p)
			}
		}
	}
	var all []string
	for t, ps := range m.owned {
		for p := range ps {
			all = append(all, fmt.Sprintf("%s:%d", t, p))
		}
	}
	slices.Sort(all)
	m.line("assigned %s", strings.Join(all, ","))
}

func run(bootstrap, topic, group, name string) error {
	m := &member{owned: map[string]map[int32]bool{}}
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(bootstrap),
		kgo.ClientID(name),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic),
		kgo.ServerSideBalancer(),
		kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, p map[string][]int32) { m.change(p, true) }),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, p map[string][]int32) { m.change(p, false) }),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, p map[string][]int32) { m.change(p, false) }),
		kgo.WithLogger(kgo.BasicLogger(os.Stderr, kgo.LogLevelInfo, nil)),
		kgo.WithHooks(&m.watch),
	)
	if err != nil {
		return fmt.Errorf("new client: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	err = consume(ctx, cl, m)
	cl.Close() // leaves the group
	return err
}

// consume polls until ctx ends, reporting and committing each poll's records.
func consume(ctx context.Context, cl *kgo.Client, m *member) error {
	for ctx.Err() == nil {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			cl.AllowRebalance()
			return nil
		}
		var failed error
		fetches.EachError(func(t string, p int32, err error) {
			failed = fmt.Errorf("fetch %s-%d: %w", t, p, err)
		})
		if failed != nil {
			return failed
		}
		recs := fetches.Records()
		for _, r := range recs {
			m.line("read %s %d %d %s", r.Topic, r.Partition, r.Offset, r.Value)
		}
		if len(recs) > 0 {
			commit(ctx, cl, m, recs)
		}
		cl.AllowRebalance()
	}
	return nil
}

// commit commits RECS synchronously and reports what was committed; a failed commit is
// logged, not fatal (those records may then be read again after a revocation).
func commit(ctx context.Context, cl *kgo.Client, m *member, recs []*kgo.Record) {
	if err := cl.CommitRecords(ctx, recs...); err != nil {
		fmt.Fprintln(os.Stderr, "groups848: commit failed:", err)
		return
	}
	next := map[string]map[int32]int64{}
	for _, r := range recs {
		if next[r.Topic] == nil {
			next[r.Topic] = map[int32]int64{}
		}
		next[r.Topic][r.Partition] = max(next[r.Topic][r.Partition], r.Offset+1)
	}
	for t, ps := range next {
		for p, o := range ps {
			m.line("committed %s %d %d", t, p, o)
		}
	}
}
