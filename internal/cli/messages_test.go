package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// runCLIStderr is runCLI that also returns what the command wrote to
// stderr.
func runCLIStderr(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	root := &cobra.Command{Use: "sluice", SilenceUsage: true, SilenceErrors: true}
	AddCommands(root)
	var out, errOut bytes.Buffer
	root.SetArgs(args)
	root.SetIn(strings.NewReader(stdin))
	root.SetOut(&out)
	root.SetErr(&errOut)
	err := root.ExecuteContext(ctx)
	return out.String(), errOut.String(), err
}

// TestResetOffsetsExecuteSaysItCommitted: --execute prints Kafka's table
// of the new offsets on stdout and says on stderr that it committed them,
// where a dry run says nothing was changed.
func TestResetOffsetsExecuteSaysItCommitted(t *testing.T) {
	f := newGroupFixture(t)
	args := append([]string{"group", "reset-offsets", f.group, "--topic", f.topic, "--to-earliest"}, f.b...)
	out, stderr, err := runCLIStderr(t, "", args...)
	if err != nil || !strings.Contains(stderr, "dry run: nothing was changed") || !strings.HasPrefix(out, "GROUP") {
		t.Fatalf("dry run: err %v, stdout:\n%s\nstderr:\n%s", err, out, stderr)
	}
	out, stderr, err = runCLIStderr(t, "", append(args, "--execute")...)
	if err != nil {
		t.Fatalf("--execute: %v", err)
	}
	if want := "committed the new offsets of group " + f.group + " for 2 partition(s)\n"; stderr != want {
		t.Fatalf("--execute wrote %q on stderr, want %q", stderr, want)
	}
	if !hasRow(out, f.group, f.topic, "0", "0") || !hasRow(out, f.group, f.topic, "1", "0") {
		t.Fatalf("--execute printed\n%s\nwant both partitions at offset 0", out)
	}
	if got := f.committed(t); got != [2]int64{0, 0} {
		t.Fatalf("committed %v after --execute --to-earliest, want [0 0]", got)
	}
}

// TestProduceShowsTheServersReason: a keyless record to a compacted topic
// is refused with INVALID_RECORD, and the command prints the server's
// reason, which kgo does not pass on.
func TestProduceShowsTheServersReason(t *testing.T) {
	addr := shared.broker(t)
	topic := uniqueTopic(t)
	mustRun(t, "", "topic", "create", topic, "-c", "cleanup.policy=compact", "-b", addr)
	defer runCLI(t, "", "topic", "delete", topic, "-b", addr)
	for _, acks := range []string{"all", "1"} {
		_, err := runCLI(t, "no key\n", "produce", topic, "-b", addr, "--acks", acks)
		if err == nil {
			t.Fatalf("acks=%s: a keyless record to a compacted topic was accepted", acks)
		}
		if msg := err.Error(); !strings.Contains(msg, "produce to "+topic+": INVALID_RECORD") ||
			!strings.Contains(msg, "(server: ") || !strings.Contains(msg, "without a key") {
			t.Fatalf("acks=%s: error %q, want INVALID_RECORD with the server's reason", acks, msg)
		}
	}
	mustRun(t, "k:v\n", "produce", topic, "-k", ":", "-b", addr)
}
