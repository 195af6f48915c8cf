package main

import (
	"errors"
	"fmt"
	"slices"
	"syscall"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// The audit must catch each way a log can disagree with the acknowledgements.
func TestAudit(t *testing.T) {
	acked := map[int64]ack{0: {0, 0}, 1: {1, 0}, 2: {0, 1}}
	rec := func(seq int64, p int32, off int64) logRecord { return logRecord{seq, p, off, true} }
	tests := []struct {
		name  string
		log   []logRecord
		check func(auditResult) bool
	}{
		{"every record once where acknowledged", []logRecord{rec(0, 0, 0), rec(2, 0, 1), rec(1, 1, 0)},
			auditResult.clean},
		{"missing", []logRecord{rec(0, 0, 0), rec(1, 1, 0)},
			func(a auditResult) bool { return slices.Equal(a.missing, []int64{2}) }},
		{"duplicated", []logRecord{rec(0, 0, 0), rec(2, 0, 1), rec(2, 0, 2), rec(1, 1, 0)},
			func(a auditResult) bool { return slices.Equal(a.duplicated, []int64{2}) }},
		{"at another offset", []logRecord{rec(0, 0, 0), rec(2, 0, 2), rec(1, 1, 0)},
			func(a auditResult) bool { return slices.Equal(a.moved, []int64{2}) }},
		{"not the producer's", []logRecord{rec(0, 0, 0), rec(2, 0, 1), rec(1, 1, 0), {ok: false}},
			func(a auditResult) bool { return a.foreign == 1 }},
		{"never acknowledged", []logRecord{rec(0, 0, 0), rec(2, 0, 1), rec(1, 1, 0), rec(3, 1, 1)},
			func(a auditResult) bool { return a.unacked == 1 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := audit(acked, tt.log)
			if !tt.check(a) {
				t.Fatalf("audit: %s", a)
			}
			if tt.name != "every record once where acknowledged" && a.clean() {
				t.Fatalf("audit found nothing wrong: %s", a)
			}
		})
	}
}

func TestRecordKeyRoundTrip(t *testing.T) {
	seq, ok := parseKey([]byte(recordKey(12345)))
	if !ok || seq != 12345 {
		t.Fatalf("parseKey(recordKey(12345)) = %d, %v", seq, ok)
	}
	if _, ok := parseKey([]byte("x1")); ok {
		t.Fatal("parseKey took a key that is not the producer's")
	}
}

// Kafka's codes keep kerr's retriable flag; a refused connection is retried.
func TestClassify(t *testing.T) {
	tests := []struct {
		err  error
		want errKind
	}{
		{kerr.NotLeaderForPartition, errKind{"NOT_LEADER_FOR_PARTITION", true}},
		{kerr.InvalidRecord, errKind{"INVALID_RECORD", false}},
		{fmt.Errorf("dial: %w", syscall.ECONNREFUSED), errKind{"connection refused", true}},
		{errors.New("something odd"), errKind{"other: something odd", false}},
	}
	for _, tt := range tests {
		if got := classify(tt.err); got != tt.want {
			t.Errorf("classify(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
