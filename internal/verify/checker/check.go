package checker

import "github.com/sluice-io/sluice/internal/verify/history"

// checks are the checks other files of the package register (the
// transactional checks of txn.go append to it in init()); Check runs
// them after its own, in order.
var checks []func(ops []history.Op) []Anomaly

// Check finds the anomalies of a history and counts what it holds. It is
// a function of ops alone (ops are not modified).
func Check(ops []history.Op) Result {
	var res Result
	res.Stats = countStats(ops)
	for _, c := range checks {
		res.Anomalies = append(res.Anomalies, c(ops)...)
	}
	return res
}

// countStats counts the history's ops. Unseen is left to the checks.
func countStats(ops []history.Op) Stats {
	finals := finalProcesses(ops)
	s := Stats{FaultsByKind: map[string]int64{}}
	for i := range ops {
		op := &ops[i]
		switch op.Kind {
		case history.Send:
			s.Sends++
		case history.Ack:
			s.Acks++
		case history.Fail:
			s.Fails++
		case history.Info:
			s.Infos++
		case history.Poll:
			if finals[op.Process] {
				s.FinalReads++
			} else {
				s.Polls++
			}
		case history.Commit:
			s.Commits++
		case history.TxnCommit:
			s.TxnCommits++
		case history.TxnAbort:
			s.TxnAborts++
		case history.FaultStart:
			s.Faults++
			s.FaultsByKind[op.Fault]++
		}
	}
	return s
}

// finalProcesses are the processes that did a final read: their polls are
// final reads.
func finalProcesses(ops []history.Op) map[string]bool {
	m := map[string]bool{}
	for i := range ops {
		if ops[i].Kind == history.Final {
			m[ops[i].Process] = true
		}
	}
	return m
}
