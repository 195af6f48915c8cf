package cli

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/internal/verify/nemesis"
)

// TestVerifyFlagErrorsExitTwo runs `sluice verify` with flags no run can
// use: each fails before anything starts, with exit status 2 (1 means
// anomalies) and a message naming the flag.
func TestVerifyFlagErrorsExitTwo(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, "unknown flag: --bogus"},
		{[]string{"--nodes", "x"}, "invalid argument"},
		{[]string{"--faults", "kill,flood"}, `--faults "flood": unknown fault kind`},
		{[]string{"--replication-factor", "2", "--min-insync-replicas", "3"}, "above --replication-factor 2"},
		{[]string{"--workload", "bank"}, `--workload "bank"`},
		{[]string{"--rate", "0"}, "--rate 0"},
		{[]string{"--override", "novalue"}, "--override"},
		{[]string{"--brokers", "h:9092", "--nodes", "5"}, "give one of them"},
		{[]string{"--brokers", "h:9092", "--override", "a=b"}, "--override shapes"},
		{[]string{"--nodes", "1"}, "--replication-factor 3 is above --nodes 1"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			cmd := newVerifyCommand()
			cmd.SetArgs(tc.args)
			cmd.SetOut(new(strings.Builder))
			cmd.SetErr(new(strings.Builder))
			err := cmd.Execute()
			if err == nil {
				t.Fatal("no error")
			}
			if code := ExitCode(err); code != ExitIncomplete {
				t.Errorf("exit status %d, want %d", code, ExitIncomplete)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestParseFaults(t *testing.T) {
	all, err := parseFaults(nil)
	if err != nil || all != nil {
		t.Fatalf("no --faults: %v, %v; want nil (every supported kind)", all, err)
	}
	none, err := parseFaults([]string{"none"})
	if err != nil || none == nil || len(none) != 0 {
		t.Fatalf("--faults none: %v, %v; want an empty list", none, err)
	}
	some, err := parseFaults([]string{"kill", " pause"})
	if err != nil || len(some) != 2 || some[0] != nemesis.Kill || some[1] != nemesis.Pause {
		t.Fatalf("--faults kill,pause: %v, %v", some, err)
	}
	for _, k := range nemesis.Kinds {
		if _, err := parseFaults([]string{string(k)}); err != nil {
			t.Errorf("kind %s refused: %v", k, err)
		}
	}
}

func TestExitCode(t *testing.T) {
	if c := ExitCode(errors.New("plain")); c != 1 {
		t.Errorf("plain error: %d", c)
	}
	wrapped := fmt.Errorf("outer: %w", &exitError{code: ExitIncomplete, err: errors.New("x")})
	if c := ExitCode(wrapped); c != ExitIncomplete {
		t.Errorf("wrapped exit error: %d", c)
	}
}
