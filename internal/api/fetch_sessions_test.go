package api

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/clock"
)

func sessionPart(p int32) sessionPartition {
	return sessionPartition{key: sessionKey{Name: "t", Partition: p}, name: "t", highWatermark: -1, logStartOffset: -1}
}

// checkSessionIndex holds a session's key index to its partitions.
func checkSessionIndex(t *testing.T, s *fetchSession) {
	t.Helper()
	if len(s.byKey) != len(s.partitions) {
		t.Fatalf("%d partitions, %d indexed", len(s.partitions), len(s.byKey))
	}
	for _, p := range s.partitions {
		if s.byKey[p.key] != p {
			t.Fatalf("partition %+v not indexed as itself", p.key)
		}
	}
}

func sessionOrder(s *fetchSession) []int32 {
	var out []int32
	for _, p := range s.partitions {
		out = append(out, p.key.Partition)
	}
	return out
}

// TestFetchSessionIndex runs a session through a full fetch naming a
// partition twice, incremental fetches adding, updating and forgetting
// partitions, and answers with records (which rotate those partitions to
// the back): the key index always matches the partitions, in order.
func TestFetchSessionIndex(t *testing.T) {
	c := newFetchSessionCache(10, time.Minute, clock.NewManual(dataTestStart))
	full := []sessionPartition{sessionPart(0), sessionPart(1), sessionPart(2), sessionPart(1)}
	fc := c.newContext(0, 0, false, false, full, nil)
	id, _ := c.complete(&fc, make([]partitionOutcome, len(full)))
	s := c.sessions[id]
	checkSessionIndex(t, s)
	if got := sessionOrder(s); !slices.Equal(got, []int32{0, 1, 2}) {
		t.Fatalf("after the full fetch: %v", got)
	}
	// Add 3 and 4, update 0, forget 1.
	upd := sessionPart(0)
	upd.fetchOffset = 42
	fc = c.newContext(id, s.epoch, false, false, []sessionPartition{sessionPart(3), upd, sessionPart(4)},
		[]sessionKey{{Name: "t", Partition: 1}, {Name: "t", Partition: 9}})
	checkSessionIndex(t, s)
	if got := sessionOrder(s); !slices.Equal(got, []int32{0, 2, 3, 4}) {
		t.Fatalf("after the incremental fetch: %v", got)
	}
	if s.find(sessionKey{Name: "t", Partition: 0}).fetchOffset != 42 {
		t.Fatal("the update was not applied")
	}
	// 0 and 3 return records: they go to the back, in their order.
	outcomes := make([]partitionOutcome, len(fc.parts))
	for i, p := range fc.parts {
		if p.key.Partition == 0 || p.key.Partition == 3 {
			outcomes[i].hasRecords = true
		}
	}
	c.complete(&fc, outcomes)
	checkSessionIndex(t, s)
	if got := sessionOrder(s); !slices.Equal(got, []int32{2, 4, 0, 3}) {
		t.Fatalf("after the rotation: %v", got)
	}
	// Forgetting everything closes the session.
	all := []sessionKey{{Name: "t", Partition: 0}, {Name: "t", Partition: 2}, {Name: "t", Partition: 3}, {Name: "t", Partition: 4}}
	c.newContext(id, s.epoch, false, false, nil, all)
	if c.size() != 0 {
		t.Fatal("a session with no partitions left stays open")
	}
}

// BenchmarkFetchSessionIncremental is one incremental fetch of a session
// of 1,000 or 10,000 partitions naming none of them (a consumer's or
// follower's steady state), with 1% answering records.
func BenchmarkFetchSessionIncremental(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("partitions=%d", n), func(b *testing.B) {
			c := newFetchSessionCache(10, time.Minute, clock.NewManual(dataTestStart))
			full := make([]sessionPartition, n)
			for i := range full {
				full[i] = sessionPart(int32(i))
			}
			fc := c.newContext(0, 0, false, false, full, nil)
			id, _ := c.complete(&fc, make([]partitionOutcome, n))
			s := c.sessions[id]
			outcomes := make([]partitionOutcome, n)
			for i := 0; i < n; i += 100 {
				outcomes[i].hasRecords = true
			}
			b.ReportAllocs()
			for b.Loop() {
				fc := c.newContext(id, s.epoch, false, false, nil, nil)
				c.complete(&fc, outcomes)
			}
		})
	}
}
