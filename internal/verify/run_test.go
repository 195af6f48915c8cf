package verify

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// TestRunWithoutAClusterHasNoVerdict points Run at a port nobody listens
// on: the run must end quickly with ErrIncomplete, never a result.
func TestRunWithoutAClusterHasNoVerdict(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	results := t.TempDir()
	var out strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := Run(ctx, Config{Brokers: []string{dead}, Results: results, Duration: time.Second}, &out)
	if !errors.Is(err, ErrIncomplete) {
		t.Fatalf("err %v, want ErrIncomplete", err)
	}
	if len(res.Anomalies) != 0 || res.Stats.Acks != 0 || out.Len() != 0 {
		t.Fatalf("an incomplete run gave a result: %+v, printed %q", res, out.String())
	}
	dirs, _ := os.ReadDir(results)
	if len(dirs) != 1 || !strings.HasPrefix(dirs[0].Name(), "queue-") {
		t.Fatalf("results dir holds %v, want one queue-<time> directory", dirs)
	}
}

func TestPhaseResult(t *testing.T) {
	live := context.Background()
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	boom := errors.New("boom")
	for _, tc := range []struct {
		name        string
		ctx, wctx   context.Context
		werr, nerr  error
		ok          bool
		errContains string
	}{
		{"time up", live, ended, context.Canceled, nil, true, ""},
		{"time up, clean return", live, ended, nil, nil, true, ""},
		{"workload failed", live, live, boom, nil, false, "workload: boom"},
		{"workload cancelled early", live, live, context.Canceled, nil, false, "workload"},
		{"nemesis failed", live, ended, nil, boom, false, "boom"},
		{"interrupted", ended, ended, context.Canceled, nil, false, "interrupted"},
	} {
		err := phaseResult(tc.ctx, tc.wctx, tc.werr, tc.nerr)
		if (err == nil) != tc.ok || (err != nil && !strings.Contains(err.Error(), tc.errContains)) {
			t.Errorf("%s: err %v", tc.name, err)
		}
	}
}
