package quorum

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestRaftLoggerNamesNodeIDs: raft's lines name nodes by node.id, not by
// raft id (node.id + 1), and only its role changes stay at INFO.
func TestRaftLoggerNamesNodeIDs(t *testing.T) {
	var buf bytes.Buffer
	l := raftLogger{log: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))}
	l.Infof("%x became leader at term %d", RaftID(1), uint64(3))
	l.Infof("%x [logterm: %d, index: %d, vote: %x] cast %s for %x [logterm: %d, index: %d] at term %d",
		RaftID(0), uint64(1), uint64(2), uint64(0), "MsgVote", RaftID(16), uint64(1), uint64(2), uint64(3))
	l.Warningf("%x stepped down: %+v (%d%%)", RaftID(16), struct{ A int }{7}, 5)
	got := buf.String()
	for _, want := range []string{`msg="1 became leader at term 3"`, `msg="16 stepped down: {A:7} (5%)"`} {
		if !strings.Contains(got, want) {
			t.Errorf("log %q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "cast MsgVote") {
		t.Errorf("a vote was logged at INFO: %q", got)
	}
	if msg := nodeIDsf("%x [logterm: %d, index: %d, vote: %x] cast %s for %x", []any{RaftID(0), uint64(1), uint64(2), uint64(0), "MsgVote", RaftID(16)}); msg != "0 [logterm: 1, index: 2, vote: none] cast MsgVote for 16" {
		t.Errorf("vote line %q", msg)
	}
	if msg := nodeIDsf("newRaft %x [peers: [%s], term: %d]", []any{RaftID(1), "2,11", uint64(0)}); msg != "newRaft 1 [peers: [1,16], term: 0]" {
		t.Errorf("newRaft line %q", msg)
	}
	if msg := nodeIDsf("%x switched to configuration %s", []any{RaftID(1), "voters=(2 3 11) learners=(5) autoleave"}); msg != "1 switched to configuration voters=(1 2 16) learners=(4) autoleave" {
		t.Errorf("configuration line %q", msg)
	}
	if msg := nodeIDsf("%x missing %d", []any{RaftID(2)}); msg != "2 missing %d(MISSING)" {
		t.Errorf("missing argument %q", msg)
	}
}
