package checker

import (
	"fmt"
	"testing"

	"github.com/sluice-io/sluice/internal/verify/history"
)

// TestOmittedBeyondCap: a broken run's flood of one kind lists the first
// maxPerKind and counts the rest, and ByKind counts them all.
func TestOmittedBeyondCap(t *testing.T) {
	var ops []history.Op
	n := maxPerKind + 5
	for i := range n {
		v := fmt.Sprintf("producer-1-%d", i)
		ops = append(ops,
			history.Op{Kind: history.Send, Process: "producer-1", Topic: "t", Value: v, Offset: -1},
			history.Op{Kind: history.Ack, Process: "producer-1", Topic: "t", Value: v, Offset: int64(i)})
	}
	ops = append(ops, history.Op{Kind: history.Final, Process: "final", Topic: "t", Offset: int64(n)})
	res := Check(ops)
	if len(res.Anomalies) != maxPerKind || res.Omitted[LostWrite] != 5 || res.ByKind()[LostWrite] != n || res.Valid() {
		t.Fatalf("listed %d, omitted %v, by kind %v", len(res.Anomalies), res.Omitted, res.ByKind())
	}
}

// TestCheckRunsRegisteredChecks: Check runs what the package's files
// register, after its own checks.
func TestCheckRunsRegisteredChecks(t *testing.T) {
	saved := checks
	defer func() { checks = saved }()
	checks = append(checks[:len(checks):len(checks)], func([]history.Op) []Anomaly {
		return []Anomaly{{Kind: "probe", Explain: "registered"}}
	})
	res := Check(nil)
	if res.ByKind()["probe"] != 1 {
		t.Fatalf("registered check not run: %v", res.ByKind())
	}
}
