package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/testutil"
)

// ackedLog records the offset of every acknowledged record.
type ackedLog struct {
	mu  sync.Mutex
	off map[string]int64
}

func (a *ackedLog) add(r *kgo.Record) {
	a.mu.Lock()
	a.off[string(r.Value)] = r.Offset
	a.mu.Unlock()
}

func (a *ackedLog) snapshot() map[string]int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[string]int64, len(a.off))
	for k, v := range a.off {
		out[k] = v
	}
	return out
}

// alterLogDir sends AlterReplicaLogDirs for topic-0 and returns its error code.
func alterLogDir(ctx context.Context, t *testing.T, cl *kgo.Client, topic, dir string) int16 {
	t.Helper()
	req := kmsg.NewPtrAlterReplicaLogDirsRequest()
	d := kmsg.NewAlterReplicaLogDirsRequestDir()
	d.Dir = dir
	rt := kmsg.NewAlterReplicaLogDirsRequestDirTopic()
	rt.Topic, rt.Partitions = topic, []int32{0}
	d.Topics = append(d.Topics, rt)
	req.Dirs = append(req.Dirs, d)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("AlterReplicaLogDirs: %v", err)
	}
	return resp.Topics[0].Partitions[0].ErrorCode
}

// partitionDir finds the log dir of topic-0 (and whether a future log of it
// exists) with DescribeLogDirs.
func partitionDir(ctx context.Context, adm *kadm.Client, topic string) (cur string, future bool, lag int64, err error) {
	dirs, err := adm.DescribeBrokerLogDirs(ctx, 1, kadm.TopicsSet{topic: {0: {}}})
	if err != nil {
		return "", false, 0, err
	}
	dirs.EachPartition(func(p kadm.DescribedLogDirPartition) {
		if p.IsFuture {
			future, lag = true, p.OffsetLag
		} else {
			cur = p.Dir
		}
	})
	return cur, future, lag, nil
}

// TestJBODMoveUnderProducerKilledAndRestarted moves a partition between the
// two log dirs of a real server while an acks=all producer writes to it,
// kills the server with SIGKILL right after the move starts, restarts it
// and checks that every acknowledged record is at its offset and that the
// move ends with one log, in the destination (the future log was resumed)
// or, if the swap had happened, there already.
func TestJBODMoveUnderProducerKilledAndRestarted(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 80*time.Second)
	defer cancel()
	base := t.TempDir()
	d1, d2 := filepath.Join(base, "d1"), filepath.Join(base, "d2")
	port := freePort(t)
	dirs := "log.dirs=" + d1 + "," + d2
	srv := startServer(t, d1, port, dirs)
	const topic = "moving"
	adm := kadm.NewClient(newClient(t, srv.addr))
	if res, err := adm.CreateTopics(ctx, 1, 1, nil, topic); err != nil || res[topic].Err != nil {
		t.Fatalf("create topic: %v %+v", err, res)
	}
	acked := &ackedLog{off: map[string]int64{}}
	produce := func(cl *kgo.Client, from, n int) {
		value := strings.Repeat("x", 1000)
		for i := from; i < from+n; i++ {
			cl.Produce(ctx, &kgo.Record{Topic: topic, Value: []byte(fmt.Sprintf("%d-%s", i, value))}, func(r *kgo.Record, err error) {
				if err == nil {
					acked.add(r)
				}
			})
		}
	}
	producer := newClient(t, srv.addr, kgo.ProducerBatchCompression(kgo.NoCompression()))
	produce(producer, 0, 30000) // ~30 MB for the move to copy
	if err := producer.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	src, _, _, err := partitionDir(ctx, adm, topic)
	if err != nil || src == "" {
		t.Fatalf("describe log dirs: %q %v", src, err)
	}
	dest := d1
	if src == d1 {
		dest = d2
	}
	produce(producer, 30000, 5000) // in flight during the move and the kill
	if code := alterLogDir(ctx, t, newClient(t, srv.addr), topic, dest); code != 0 {
		t.Fatalf("AlterReplicaLogDirs: error %d", code)
	}
	// The copy may be done already; if not, DescribeLogDirs shows the
	// future log in dest with how far it is behind.
	var futureSeen string
	if dirs, err := adm.DescribeBrokerLogDirs(ctx, 1, kadm.TopicsSet{topic: {0: {}}}); err == nil {
		dirs.EachPartition(func(p kadm.DescribedLogDirPartition) {
			if p.IsFuture {
				futureSeen = fmt.Sprintf("in %s, lag %d, size %d", p.Dir, p.OffsetLag, p.Size)
				if p.Dir != dest || p.OffsetLag < 0 || p.OffsetLag > 35000 {
					t.Errorf("future log %s: want it in %s with a lag in [0, 35000]", futureSeen, dest)
				}
			}
		})
	}
	srv.kill()
	producer.Close()
	future, _ := filepath.Glob(filepath.Join(dest, topic+"-0.*-future"))
	t.Logf("killed with the partition in %s, future dirs %v (described: %q)", src, future, futureSeen)

	before := acked.snapshot()
	srv = startServer(t, d1, port, dirs)
	adm = kadm.NewClient(newClient(t, srv.addr))
	testutil.EventuallyNoError(t, 40*time.Second, func() error {
		cur, fut, lag, err := partitionDir(ctx, adm, topic)
		if err != nil || fut || cur != dest {
			return fmt.Errorf("partition in %q, future %v (lag %d), err %v", cur, fut, lag, err)
		}
		return nil
	}, "the move completes after the restart")
	if ents, _ := filepath.Glob(filepath.Join(src, topic+"-0")); len(ents) != 0 {
		t.Fatalf("the source dir still has the partition's log: %v", ents)
	}
	consumer := newClient(t, srv.addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	got := map[string]int64{}
	for len(got) < len(before) {
		fs := consumer.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d records, %d acknowledged", len(got), len(before))
		}
		fs.EachRecord(func(r *kgo.Record) { got[string(r.Value)] = r.Offset })
	}
	for v, off := range before {
		if g, ok := got[v]; !ok || g != off {
			t.Fatalf("acknowledged record %.10s at offset %d: read at %d (found %v)", v, off, g, ok)
		}
	}
	t.Logf("%d acknowledged records all read back at their offsets", len(before))
	if _, err := os.Stat(filepath.Join(dest, topic+"-0")); err != nil {
		t.Fatal(err)
	}
}
