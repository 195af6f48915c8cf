package sluicetest

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func endOffset(t *testing.T, c *Cluster, topic string) int64 {
	t.Helper()
	ends, err := kadm.NewClient(client(t, c)).ListEndOffsets(ctxT(t), topic)
	if err != nil {
		t.Fatal(err)
	}
	o, ok := ends.Lookup(topic, 0)
	if !ok || o.Err != nil {
		t.Fatalf("end offset of %s: %+v", topic, o)
	}
	return o.Offset
}

// On disk a killed node keeps what it acknowledged: the page cache outlives
// a killed process.
func TestKillRestartKeepsAckedDataOnDisk(t *testing.T) {
	c := Start(t, SeedTopics(1, "t"))
	produce(t, client(t, c), "t", "a", "b", "c")
	if err := c.KillNode(1); err != nil {
		t.Fatal(err)
	}
	if err := c.RestartNode(1); err != nil {
		t.Fatal(err)
	}
	if got := consume(t, c, "t", 3); got[0] != "a" || got[2] != "c" {
		t.Fatalf("consumed %q after kill and restart", got)
	}
}

// In memory a kill is a power loss: records of a topic that fsyncs each
// one (flush.messages=1) survive, those of a topic left to the default
// (no fsync) are lost.
func TestInMemoryKillLosesOnlyUnsynced(t *testing.T) {
	c := Start(t, InMemory(), SeedTopics(1, "unsynced"))
	adm := kadm.NewClient(client(t, c))
	one := "1"
	if r, err := adm.CreateTopic(ctxT(t), 1, 1, map[string]*string{"flush.messages": &one}, "synced"); err != nil || r.Err != nil {
		t.Fatalf("create synced: %v %v", err, r.Err)
	}
	if err := c.WaitLeaders(ctxT(t), "synced"); err != nil {
		t.Fatal(err)
	}
	cl := client(t, c)
	produce(t, cl, "synced", "a", "b", "c")
	produce(t, cl, "unsynced", "x", "y", "z")
	if err := c.KillNode(1); err != nil {
		t.Fatal(err)
	}
	if err := c.RestartNode(1); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitLeaders(ctxT(t), "unsynced"); err != nil {
		t.Fatal(err)
	}
	if got := endOffset(t, c, "synced"); got != 3 {
		t.Fatalf("synced topic's end offset %d after the kill, want 3", got)
	}
	if got := endOffset(t, c, "unsynced"); got != 0 {
		t.Fatalf("unsynced topic's end offset %d after the kill, want 0 (its writes were never synced)", got)
	}
	if got := consume(t, c, "synced", 3); got[0] != "a" || got[2] != "c" {
		t.Fatalf("consumed %q", got)
	}
}

// A node isolated from its peers loses the leadership of its partition:
// the controller (elsewhere, once the quorum re-elects if it was there)
// fences it when its session expires.
func TestIsolatedNodeLosesLeadership(t *testing.T) {
	c := Start(t, NumNodes(3), SeedTopics(1, "t"),
		Config("broker.session.timeout.ms", "1000"),
		Config("broker.heartbeat.interval.ms", "100"))
	cl := client(t, c)
	adm := kadm.NewClient(cl)
	md, err := adm.Metadata(ctxT(t), "t")
	if err != nil {
		t.Fatal(err)
	}
	leader := md.Topics["t"].Partitions[0].Leader
	if err := c.Isolate(leader); err != nil {
		t.Fatal(err)
	}
	other := leader%3 + 1
	ctx := ctxT(t)
	for {
		cl2 := client(t, c, kgo.SeedBrokers(c.ListenAddrs()[other-1]))
		md, err := kadm.NewClient(cl2).Metadata(ctx, "t")
		cl2.Close()
		if err == nil && md.Topics["t"].Partitions[0].Leader != leader && md.Topics["t"].Partitions[0].Leader >= 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("node %d still leads t-0 in node %d's metadata after its isolation", leader, other)
		}
	}
	if err := c.Rejoin(leader); err != nil {
		t.Fatal(err)
	}
	produce(t, client(t, c, kgo.RequiredAcks(kgo.AllISRAcks())), "t", "after")
}

// A failed disk fails the node's writes: the produce is not acknowledged,
// the log dir goes offline and the node, left with no log dir, halts as a
// Kafka broker does; restarted on a healthy disk it serves again.
func TestFailDiskHaltsNode(t *testing.T) {
	c := Start(t, SeedTopics(1, "t"))
	produce(t, client(t, c), "t", "before")
	err := c.FailDisk(1, func(op, path string) error {
		if op == "write" && strings.Contains(path, "/t-0/") {
			return syscall.EIO
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Not idempotent: kgo never fails an idempotent batch whose outcome
	// it does not know (a request in flight when the node halts), and the
	// partition's only replica is on the halted node.
	cl := client(t, c, kgo.RecordRetries(2), kgo.RecordDeliveryTimeout(3*time.Second), kgo.DisableIdempotentWrite())
	if err := cl.ProduceSync(ctxT(t), &kgo.Record{Topic: "t", Value: []byte("lost")}).FirstErr(); err == nil {
		t.Fatal("produce acknowledged while the node's writes fail")
	}
	ctx := ctxT(t)
	for c.Running(1) {
		if ctx.Err() != nil {
			t.Fatal("node 1 still runs with its only log dir failed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := c.RestartNode(1); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitLeaders(ctxT(t), "t"); err != nil {
		t.Fatal(err)
	}
	produce(t, client(t, c), "t", "after")
	if got := consume(t, c, "t", 2); got[0] != "before" || got[1] != "after" {
		t.Fatalf("consumed %q", got)
	}
}
