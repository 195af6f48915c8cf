package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// runReassign runs `topic reassign ARGS` on a topic command of its own, so
// the test does not depend on where the command is registered.
func runReassign(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn := &connection{}
	topic := &cobra.Command{Use: "topic", SilenceUsage: true, SilenceErrors: true}
	addConnectionFlags(topic, conn)
	topic.AddCommand(newTopicReassignCommand(conn))
	var out bytes.Buffer
	topic.SetArgs(append([]string{"reassign"}, args...))
	topic.SetOut(&out)
	topic.SetErr(&out)
	err := topic.ExecuteContext(ctx)
	return out.String(), err
}

// TestTopicReassign drives the command against the one-broker test server:
// moving a partition to the broker it is on changes nothing, the list is
// empty, and the cluster's refusals come back as Kafka errors.
func TestTopicReassign(t *testing.T) {
	addr := shared.broker(t)
	topic := uniqueTopic(t)
	mustRun(t, "", "topic", "create", topic, "-p", "1", "-r", "1", "--brokers", addr)
	defer runCLI(t, "", "topic", "delete", topic, "--brokers", addr)

	out, err := runReassign(t, topic, "--partition", "0", "--replicas", "1", "--brokers", addr)
	if err != nil || out != "reassigning "+topic+"-0 to replicas [1] (follow it with --list)\n" {
		t.Fatalf("reassign to the current broker: %q, %v", out, err)
	}
	out, err = runReassign(t, "--list", "--brokers", addr)
	if err != nil || strings.TrimSpace(out) != "TOPIC  PARTITION  REPLICAS  ADDING  REMOVING" {
		t.Fatalf("list: %q, %v", out, err)
	}
	_, err = runReassign(t, topic, "--partition", "0", "--cancel", "--brokers", addr)
	if err == nil || !strings.Contains(err.Error(), "NO_REASSIGNMENT_IN_PROGRESS") {
		t.Fatalf("cancel without a move: %v, want NO_REASSIGNMENT_IN_PROGRESS", err)
	}
	_, err = runReassign(t, topic, "--partition", "0", "--replicas", "1,9", "--brokers", addr)
	if err == nil || !strings.Contains(err.Error(), "INVALID_REPLICA_ASSIGNMENT") || !strings.Contains(err.Error(), "broker 9") {
		t.Fatalf("move to an unknown broker: %v, want INVALID_REPLICA_ASSIGNMENT naming broker 9", err)
	}
	for _, bad := range [][]string{
		{topic, "--replicas", "1"},
		{topic, "--partition", "0"},
		{topic, "--partition", "0", "--replicas", "1", "--cancel"},
		{"--list", "--partition", "0"},
		{"--partition", "0", "--replicas", "1"},
	} {
		if _, err := runReassign(t, append(bad, "--brokers", addr)...); err == nil {
			t.Errorf("reassign %v: no usage error", bad)
		}
	}
}
