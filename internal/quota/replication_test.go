package quota

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/kafka"
)

func TestSimpleRateWindow(t *testing.T) {
	cfg := DefaultConfig()
	var r Rate
	steps := []struct {
		at     int64
		value  float64
		window int64
		rate   float64
	}{
		// A new sensor divides by one window, not Samples-1 of them.
		{0, 100, 1000, 100},
		{500, 100, 1000, 200},
		// 1.5 s since the oldest sample began.
		{1500, 100, 1500, 200},
		{10000, 0, 10000, 30},
		// At 12 s the sample last recorded at 0.5 s is 11.5 s old and
		// reset; the one of 1.5 s is kept.
		{12000, 0, 10500, 100 / 10.5},
	}
	for _, s := range steps {
		r.Record(cfg, s.value, s.at)
		if w := r.SimpleRateWindowMs(cfg, s.at); w != s.window {
			t.Fatalf("at %d: window %d, want %d", s.at, w, s.window)
		}
		if got := r.MeasureSimple(cfg, s.at); math.Abs(got-s.rate) > 1e-9 {
			t.Fatalf("at %d: rate %v, want %v", s.at, got, s.rate)
		}
	}
}

func TestParseThrottledReplicas(t *testing.T) {
	cases := []struct {
		in   string
		all  bool
		want []int32
	}{
		{"", false, nil},
		{" * ", true, nil},
		{"0:1,0:2,1:2,2:3", false, []int32{0, 1}},
		{"0:1, 3:2 ,bad,4:x", false, []int32{3}},
		{"5:3", false, nil},
	}
	for _, c := range cases {
		got := ParseThrottledReplicas(c.in, 2)
		if got.All != c.all || !slices.Equal(got.Partitions, c.want) {
			t.Errorf("%q: got %+v, want all=%v %v", c.in, got, c.all, c.want)
		}
	}
}

func TestReplicationQuotaThrottledPartitions(t *testing.T) {
	q := NewReplicationQuota(LeaderReplication, DefaultConfig(), clock.NewManual(time.Unix(0, 0)))
	tp := func(topic string, p int32) kafka.TopicPartition {
		return kafka.TopicPartition{Topic: topic, Partition: p}
	}
	if q.AnyThrottled() || q.IsThrottled(tp("a", 0)) {
		t.Fatal("a new quota throttles something")
	}
	q.SetThrottled(map[string]ThrottledReplicas{
		"a": {Partitions: []int32{1}},
		"b": {All: true},
		"c": {},
	})
	for _, c := range []struct {
		tp   kafka.TopicPartition
		want bool
	}{{tp("a", 0), false}, {tp("a", 1), true}, {tp("b", 7), true}, {tp("c", 0), false}, {tp("d", 0), false}} {
		if got := q.IsThrottled(c.tp); got != c.want {
			t.Errorf("%v throttled %v, want %v", c.tp, got, c.want)
		}
	}
	q.SetThrottled(nil)
	if q.AnyThrottled() || q.IsThrottled(tp("b", 0)) {
		t.Fatal("removed throttles still apply")
	}
}

// TestReplicationQuotaHoldsRate drives a fetcher that sends 1 MiB every
// 10 ms unless the quota is exceeded, as the leader and follower do: over
// 30 s the bytes sent are the bound's within a few percent, and a bound
// changed midway applies from then on.
func TestReplicationQuotaHoldsRate(t *testing.T) {
	clk := clock.NewManual(time.Unix(0, 0))
	q := NewReplicationQuota(FollowerReplication, DefaultConfig(), clk)
	if q.IsQuotaExceeded() {
		t.Fatal("an unlimited quota is exceeded")
	}
	const bound = 10 << 20
	q.UpdateQuota(bound)
	run := func(d time.Duration) int64 {
		var sent int64
		for end := clk.Now().Add(d); clk.Now().Before(end); clk.Advance(10 * time.Millisecond) {
			if !q.IsQuotaExceeded() {
				q.Record(1 << 20)
				sent += 1 << 20
			}
		}
		return sent
	}
	sent := run(30 * time.Second)
	if want := int64(30 * bound); math.Abs(float64(sent-want)) > 0.05*float64(want) {
		t.Fatalf("sent %d bytes in 30 s, want %d within 5%%", sent, want)
	}
	q.UpdateQuota(2 << 20)
	run(15 * time.Second) // the 10 MiB/s samples age out
	sent = run(30 * time.Second)
	if want := int64(30 * (2 << 20)); math.Abs(float64(sent-want)) > 0.05*float64(want) {
		t.Fatalf("after lowering the bound: sent %d bytes in 30 s, want %d within 5%%", sent, want)
	}
	q.UpdateQuota(Unlimited)
	if q.IsQuotaExceeded() {
		t.Fatal("the quota is exceeded once unlimited again")
	}
}

// FuzzParseThrottledReplicas: any list parses without panicking; "*"
// alone means all; every partition yielded is a non-negative number.
func FuzzParseThrottledReplicas(f *testing.F) {
	for _, s := range []string{"", "*", "0:1,1:2", " 3 : 2 ,x,4:", "-1:2,2147483648:2", "007:02"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := ParseThrottledReplicas(s, 2)
		if got.All != (strings.TrimSpace(s) == "*") || (got.All && len(got.Partitions) > 0) {
			t.Fatalf("%q: %+v", s, got)
		}
		for _, p := range got.Partitions {
			if p < 0 {
				t.Fatalf("%q: partition %d", s, p)
			}
		}
	})
}
