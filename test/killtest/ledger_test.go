package main

import (
	"errors"
	"strings"
	"testing"
)

func snapshotOf(acked map[int32][]ackedRecord) ledgerSnapshot {
	return ledgerSnapshot{acked: acked, failed: map[int64]error{}}
}

func TestVerifyAcceptsEveryAckReadOnceInOrder(t *testing.T) {
	acked := map[int32][]ackedRecord{
		0: {{seq: 1, offset: 0}, {seq: 4, offset: 1, phase: 1}},
		1: {{seq: 2, offset: 0}, {seq: 3, offset: 1, phase: 2}},
	}
	read := map[int32][]readRecord{
		0: {{seq: 1, offset: 0}, {seq: 4, offset: 1}, {seq: 7, offset: 2}}, // 7: unacknowledged, allowed
		1: {{seq: 2, offset: 0}, {seq: 3, offset: 1}},
	}
	if problems := verify(snapshotOf(acked), read); len(problems) != 0 {
		t.Fatalf("verify reported %v for a correct log", problems)
	}
}

func TestVerifyReportsEachViolation(t *testing.T) {
	acked := map[int32][]ackedRecord{
		0: {{seq: 1, offset: 0}, {seq: 2, offset: 1}, {seq: 5, offset: 3}},
		1: {{seq: 3, offset: 0}},
	}
	cases := []struct {
		name string
		read map[int32][]readRecord
		want string
	}{
		{
			name: "lost",
			read: map[int32][]readRecord{0: {{1, 0}, {2, 1}}, 1: {{3, 0}}},
			want: "acknowledged record 5 (partition 0 offset 3, phase 0) lost",
		},
		{
			name: "duplicate across partitions",
			read: map[int32][]readRecord{0: {{1, 0}, {2, 1}, {5, 3}}, 1: {{3, 0}, {2, 1}}},
			want: "record 2 read twice",
		},
		{
			name: "duplicate in one partition",
			read: map[int32][]readRecord{0: {{1, 0}, {2, 1}, {2, 2}, {5, 3}}, 1: {{3, 0}}},
			want: "out of order: record 2 at partition 0 offset 2 after record 2",
		},
		{
			name: "reordered",
			read: map[int32][]readRecord{0: {{2, 0}, {1, 1}, {5, 3}}, 1: {{3, 0}}},
			want: "out of order: record 1",
		},
		{
			name: "wrong record at acknowledged offset",
			read: map[int32][]readRecord{0: {{1, 0}, {2, 1}, {4, 2}, {6, 3}}, 1: {{3, 0}}},
			want: "acknowledged record 5 at partition 0 offset 3 (phase 0) reads back as record 6",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			problems := verify(snapshotOf(acked), c.read)
			if !strings.Contains(strings.Join(problems, "\n"), c.want) {
				t.Fatalf("problems %q do not mention %q", problems, c.want)
			}
		})
	}
}

func TestLedgerCountsAcksPerPhase(t *testing.T) {
	l := newLedger()
	l.ack(0, 1, 0)
	l.setPhase(1)
	l.ack(1, 2, 0)
	l.ack(0, 3, 1)
	l.setPhase(2)
	l.fail(4, errors.New("boom"))
	s := l.snapshot()
	if got := s.acksPerPhase(3); got[0] != 1 || got[1] != 2 || got[2] != 0 {
		t.Fatalf("acks per phase %v, want [1 2 0]", got)
	}
	if s.ackedCount() != 3 || len(s.failed) != 1 {
		t.Fatalf("acked %d failed %d, want 3 and 1", s.ackedCount(), len(s.failed))
	}
}
