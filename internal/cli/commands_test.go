package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/testbin"
	"github.com/sluice-io/sluice/internal/testutil"
)

func TestTopicLifecycle(t *testing.T) {
	addr := shared.broker(t)
	topic := uniqueTopic(t)
	b := []string{"--brokers", addr}

	out := mustRun(t, "", append([]string{"topic", "create", topic, "-p", "3", "-r", "1", "-c", "retention.ms=123456"}, b...)...)
	if want := fmt.Sprintf("created %s: 3 partitions, replication factor 1\n", topic); out != want {
		t.Fatalf("create printed %q, want %q", out, want)
	}
	out = mustRun(t, "", append([]string{"topic", "list"}, b...)...)
	if !hasRow(out, topic, "3", "1") {
		t.Fatalf("list does not show %s with 3 partitions, 1 replica:\n%s", topic, out)
	}
	out = mustRun(t, "", append([]string{"topic", "describe", topic}, b...)...)
	if !hasRow(out, "retention.ms", "123456", "DYNAMIC_TOPIC_CONFIG") {
		t.Fatalf("describe does not show the topic config:\n%s", out)
	}
	for p := range 3 {
		if !hasRowPrefix(out, fmt.Sprint(p)) {
			t.Fatalf("describe has no row for partition %d:\n%s", p, out)
		}
	}
	mustRun(t, "", append([]string{"topic", "alter-config", topic, "-c", "retention.ms=654321", "-c", "cleanup.policy=compact"}, b...)...)
	out = mustRun(t, "", append([]string{"topic", "describe", topic}, b...)...)
	if !hasRow(out, "retention.ms", "654321", "DYNAMIC_TOPIC_CONFIG") || !hasRow(out, "cleanup.policy", "compact", "DYNAMIC_TOPIC_CONFIG") {
		t.Fatalf("describe after alter-config:\n%s", out)
	}
	mustRun(t, "", append([]string{"topic", "alter-config", topic, "--delete", "retention.ms"}, b...)...)
	out = mustRun(t, "", append([]string{"topic", "describe", topic}, b...)...)
	if strings.Contains(out, "654321") {
		t.Fatalf("retention.ms still set after --delete:\n%s", out)
	}
	if out := mustRun(t, "", append([]string{"topic", "delete", topic}, b...)...); out != "deleted "+topic+"\n" {
		t.Fatalf("delete printed %q", out)
	}
}

func TestTopicErrorsNameTheKafkaError(t *testing.T) {
	addr := shared.broker(t)
	topic := uniqueTopic(t)
	mustRun(t, "", "topic", "create", topic, "--brokers", addr)
	defer runCLI(t, "", "topic", "delete", topic, "--brokers", addr)

	_, err := runCLI(t, "", "topic", "create", topic, "--brokers", addr)
	if err == nil || !strings.Contains(err.Error(), "TOPIC_ALREADY_EXISTS: Topic with this name already exists.") {
		t.Fatalf("creating an existing topic: err = %v, want TOPIC_ALREADY_EXISTS with its meaning", err)
	}
	_, err = runCLI(t, "", "topic", "describe", topic+"-missing", "--brokers", addr)
	if err == nil || !strings.Contains(err.Error(), "UNKNOWN_TOPIC_OR_PARTITION") {
		t.Fatalf("describing a missing topic: err = %v, want UNKNOWN_TOPIC_OR_PARTITION", err)
	}
	if err != nil && strings.Contains(err.Error(), "\n") {
		t.Fatalf("error is not one line: %q", err)
	}
}

func TestClusterInfoAndConfig(t *testing.T) {
	addr := shared.broker(t)
	b := []string{"--brokers", addr}
	out := mustRun(t, "", append([]string{"cluster", "info"}, b...)...)
	if !hasRowPrefix(out, "CLUSTER") || !hasRowPrefix(out, "CONTROLLER") || !hasRow(out, "BROKER", "HOST", "PORT", "RACK") {
		t.Fatalf("cluster info:\n%s", out)
	}
	get := []string{"cluster", "config", "get", "log.retention.ms", "--brokers", addr}
	mustRun(t, "", append([]string{"cluster", "config", "set", "log.retention.ms=7777777"}, b...)...)
	// Brokers apply dynamic configs asynchronously (Kafka does), so the
	// new value may take a moment to show.
	testutil.EventuallyNoError(t, 10*time.Second, lastOutput(func() (bool, string) {
		out := mustRun(t, "", get...)
		return hasRow(out, "log.retention.ms", "7777777", "DYNAMIC_DEFAULT_BROKER_CONFIG"), out
	}), "dynamic config shown")
	mustRun(t, "", append([]string{"cluster", "config", "set", "--delete", "log.retention.ms"}, b...)...)
	testutil.EventuallyNoError(t, 10*time.Second, lastOutput(func() (bool, string) {
		out := mustRun(t, "", get...)
		return !strings.Contains(out, "7777777"), out
	}), "dynamic config deleted")
	if _, err := runCLI(t, "", append([]string{"cluster", "config", "get", "no.such.key"}, b...)...); err == nil {
		t.Fatal("config get of an unknown key succeeded")
	}
}

func TestUnreachableBrokerIsOneLineError(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", testbin.FreePort(t))
	for _, args := range [][]string{
		{"topic", "list"},
		{"cluster", "info"},
		{"produce", "t"},
		{"consume", "t", "-e"},
	} {
		_, err := runCLI(t, "x\n", append(args, "--brokers", addr, "--timeout", "3s")...)
		if err == nil {
			t.Fatalf("%v against a closed port succeeded", args)
		}
		if !strings.Contains(err.Error(), "cannot reach brokers "+addr) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("%v: error %q, want one line saying the brokers cannot be reached", args, err)
		}
	}
}

func TestBrokersFromEnvironment(t *testing.T) {
	addr := shared.broker(t)
	t.Setenv(BrokersEnv, addr)
	if _, err := runCLI(t, "", "cluster", "info", "--timeout", "10s"); err != nil {
		t.Fatalf("cluster info with %s=%s: %v", BrokersEnv, addr, err)
	}
}

// requireDataPlane skips when the built sluice server does not serve
// Produce and Fetch yet (it is being finished); an external broker must.
func requireDataPlane(t *testing.T, addr, topic string) {
	t.Helper()
	_, err := runCLI(t, "probe\n", "produce", topic, "--brokers", addr, "--timeout", "5s")
	if err == nil {
		return
	}
	if os.Getenv(testBrokersEnv) != "" {
		t.Fatalf("produce to %s: %v", addr, err)
	}
	t.Skipf("the sluice server does not serve Produce yet: %v", err)
}

func TestProduceConsumeRoundTrip(t *testing.T) {
	addr := shared.broker(t)
	topic := uniqueTopic(t)
	b := []string{"--brokers", addr}
	mustRun(t, "", append([]string{"topic", "create", topic, "-p", "1"}, b...)...)
	defer runCLI(t, "", "topic", "delete", topic, "--brokers", addr)
	requireDataPlane(t, addr, topic)

	out := mustRun(t, "k1:v1\nk2:v2\nk3:v3\n", append([]string{"produce", topic, "-k", ":", "-H", "src=test", "-v", "--acks", "1", "--compression", "zstd"}, b...)...)
	if want := "partition 0 offset 1\npartition 0 offset 2\npartition 0 offset 3\n"; out != want {
		t.Fatalf("produce -v printed %q, want %q", out, want)
	}
	out = mustRun(t, "", append([]string{"consume", topic, "-e", "-o", "1", "-f", `%t|%p|%o|%k|%v|%h\n`}, b...)...)
	want := fmt.Sprintf("%[1]s|0|1|k1|v1|src=test\n%[1]s|0|2|k2|v2|src=test\n%[1]s|0|3|k3|v3|src=test\n", topic)
	if out != want {
		t.Fatalf("consume printed\n%s\nwant\n%s", out, want)
	}
	out = mustRun(t, "", append([]string{"consume", topic, "-o", "-2", "-n", "2"}, b...)...)
	if out != "v2\nv3\n" {
		t.Fatalf("consume -o -2 -n 2 printed %q", out)
	}
	out = mustRun(t, "", append([]string{"consume", topic, "-e", "-o", "3", "--json"}, b...)...)
	var rec jsonRecord
	if err := json.Unmarshal([]byte(out), &rec); err != nil {
		t.Fatalf("consume --json printed %q: %v", out, err)
	}
	if rec.Offset != 3 || rec.Key == nil || *rec.Key != "k3" || len(rec.Headers) != 1 || rec.Headers[0].Key != "src" {
		t.Fatalf("consume --json record: %+v", rec)
	}
	out = mustRun(t, "a\x00b\x00", append([]string{"produce", topic, "--delimiter", `\0`, "-v", "-p", "0"}, b...)...)
	if out != "partition 0 offset 4\npartition 0 offset 5\n" {
		t.Fatalf("produce with a NUL delimiter printed %q", out)
	}
	if out := mustRun(t, "", append([]string{"consume", topic, "-e", "-o", "-2"}, b...)...); out != "a\nb\n" {
		t.Fatalf("consume after NUL-delimited produce printed %q", out)
	}
	out = mustRun(t, "fire-and-forget\n", append([]string{"produce", topic, "--acks", "0", "-v"}, b...)...)
	if out != "partition 0 offset unknown (acks=0)\n" {
		t.Fatalf("produce --acks 0 -v printed %q", out)
	}
	testutil.EventuallyNoError(t, 10*time.Second, lastOutput(func() (bool, string) {
		out := mustRun(t, "", append([]string{"consume", topic, "-e", "-o", "-1", "-f", `%o %v\n`}, b...)...)
		return out == "6 fire-and-forget\n", out
	}), "acks=0 record consumed")
	if out := mustRun(t, "", append([]string{"consume", topic, "-e", "--timestamp", "2100-01-01T00:00:00Z"}, b...)...); out != "" {
		t.Fatalf("consume from a time after every record printed %q", out)
	}
	out = mustRun(t, "", append([]string{"consume", topic, "-e", "--timestamp", "0", "-f", `%o,`}, b...)...)
	if out != "0,1,2,3,4,5,6," {
		t.Fatalf("consume from time 0 printed %q", out)
	}
}

// TestProduceVerboseFollowsInputOrder: -v prints one line per input record,
// in input order, even though partitions acknowledge in any order.
func TestProduceVerboseFollowsInputOrder(t *testing.T) {
	addr := shared.broker(t)
	topic := uniqueTopic(t)
	b := []string{"--brokers", addr}
	mustRun(t, "", append([]string{"topic", "create", topic, "-p", "3"}, b...)...)
	defer runCLI(t, "", "topic", "delete", topic, "--brokers", addr)
	requireDataPlane(t, addr, topic)

	var in strings.Builder
	for i := range 60 {
		fmt.Fprintf(&in, "key-%d:%d\n", i, i)
	}
	produced := strings.Split(strings.TrimSuffix(mustRun(t, in.String(), append([]string{"produce", topic, "-k", ":", "-v"}, b...)...), "\n"), "\n")
	if len(produced) != 60 {
		t.Fatalf("produce -v printed %d lines, want 60", len(produced))
	}
	consumed := mustRun(t, "", append([]string{"consume", topic, "-e", "-f", `partition %p offset %o=%v\n`}, b...)...)
	at := make(map[string]string) // "partition P offset O" -> value
	for _, line := range strings.Split(strings.TrimSuffix(consumed, "\n"), "\n") {
		where, value, _ := strings.Cut(line, "=")
		at[where] = value
	}
	for i, where := range produced {
		if at[where] != fmt.Sprint(i) {
			t.Fatalf("line %d of produce -v is %q, which holds %q, not record %d", i, where, at[where], i)
		}
	}
}

func TestConsumeGroup(t *testing.T) {
	addr := shared.broker(t)
	topic := uniqueTopic(t)
	b := []string{"--brokers", addr}
	mustRun(t, "", append([]string{"topic", "create", topic, "-p", "1"}, b...)...)
	defer runCLI(t, "", "topic", "delete", topic, "--brokers", addr)
	requireDataPlane(t, addr, topic)

	out, err := runCLI(t, "", append([]string{"consume", topic, "--group", topic + "-g", "-n", "1"}, b...)...)
	if err != nil {
		if !strings.Contains(err.Error(), "does not serve consumer groups") {
			t.Fatalf("consume --group: %v; want either success or the missing group API named", err)
		}
		return
	}
	if out != "probe\n" {
		t.Fatalf("consume --group printed %q, want the probe record", out)
	}
	// The group committed what was printed: a member resumes after it, and
	// with -e stops at the end, even when the commit is the end already.
	mustRun(t, "second\n", append([]string{"produce", topic}, b...)...)
	group := append([]string{"consume", topic, "--group", topic + "-g", "-e"}, b...)
	if out := mustRun(t, "", group...); out != "second\n" {
		t.Fatalf("consume --group -e after the commit printed %q, want the one new record", out)
	}
	if out := mustRun(t, "", group...); out != "" {
		t.Fatalf("consume --group -e with everything committed printed %q", out)
	}
}

func TestBenchProduceAndConsumeJSON(t *testing.T) {
	addr := shared.broker(t)
	topic := uniqueTopic(t)
	b := []string{"--brokers", addr}
	mustRun(t, "", append([]string{"topic", "create", topic, "-p", "2"}, b...)...)
	defer runCLI(t, "", "topic", "delete", topic, "--brokers", addr)
	requireDataPlane(t, addr, topic)

	out := mustRun(t, "", append([]string{"bench", "produce", topic, "-n", "500", "-s", "64", "--json"}, b...)...)
	var res benchResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("bench produce --json printed %q: %v", out, err)
	}
	if res.Records != 500 || res.Bytes != 500*64 || res.Errors != 0 || res.P50Ms <= 0 || res.MaxMs < res.P999Ms {
		t.Fatalf("bench produce result: %+v", res)
	}
	out = mustRun(t, "", append([]string{"bench", "consume", topic, "--json"}, b...)...)
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("bench consume --json printed %q: %v", out, err)
	}
	if res.Records != 501 { // the probe record and the 500
		t.Fatalf("bench consume read %d records, want 501: %+v", res.Records, res)
	}
	out = mustRun(t, "", append([]string{"bench", "produce", topic, "-n", "10"}, b...)...)
	if !hasRowPrefix(out, "records/s") || !hasRowPrefix(out, "p99.9") {
		t.Fatalf("bench table:\n%s", out)
	}
}

// lastOutput makes a check that also returns the output it judged into a
// function for testutil.EventuallyNoError, failing with that output.
func lastOutput(check func() (bool, string)) func() error {
	return func() error {
		if ok, out := check(); !ok {
			return fmt.Errorf("last output:\n%s", out)
		}
		return nil
	}
}

// hasRow reports whether some line of out has exactly these fields.
func hasRow(out string, fields ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		if strings.Join(strings.Fields(line), " ") == strings.Join(fields, " ") {
			return true
		}
	}
	return false
}

// hasRowPrefix reports whether some line's first field is first.
func hasRowPrefix(out, first string) bool {
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == first {
			return true
		}
	}
	return false
}

// TestConsumeFollowsUntilInterrupted: without -n or -e consume keeps
// following; cancelling its context (what Ctrl-C does) ends it cleanly,
// after records produced meanwhile were printed.
func TestConsumeFollowsUntilInterrupted(t *testing.T) {
	addr := shared.broker(t)
	topic := uniqueTopic(t)
	mustRun(t, "", "topic", "create", topic, "-p", "1", "--brokers", addr)
	defer runCLI(t, "", "topic", "delete", topic, "--brokers", addr)
	requireDataPlane(t, addr, topic)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	root := &cobra.Command{Use: "sluice", SilenceUsage: true, SilenceErrors: true}
	AddCommands(root)
	out := &testbin.SyncBuffer{}
	root.SetArgs([]string{"consume", topic, "--brokers", addr})
	root.SetOut(out)
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()

	mustRun(t, "later\n", "produce", topic, "--brokers", addr)
	testutil.EventuallyNoError(t, 10*time.Second, lastOutput(func() (bool, string) {
		s := out.String()
		return s == "probe\nlater\n", s
	}), "consumer printed the later record")
	select {
	case err := <-done:
		t.Fatalf("consume returned before it was interrupted: %v", err)
	default:
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("consume after interrupt: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("consume did not stop within 10 s of the interrupt")
	}
}

func TestShellCompletionOffersTopics(t *testing.T) {
	addr := shared.broker(t)
	topic := uniqueTopic(t)
	mustRun(t, "", "topic", "create", topic, "--brokers", addr)
	defer runCLI(t, "", "topic", "delete", topic, "--brokers", addr)
	testutil.EventuallyNoError(t, 10*time.Second, lastOutput(func() (bool, string) {
		out := mustRun(t, "", "__complete", "consume", "--brokers", addr, topic[:len(topic)-3])
		return strings.Contains(out, topic+"\n"), out
	}), "completion offers the topic")
	out := mustRun(t, "", "__complete", "consume", "--brokers", addr, topic, "")
	if strings.Contains(out, topic) {
		t.Fatalf("consume takes one topic, yet a second is offered:\n%s", out)
	}
}

// TestConsumeExitAfterTransactionMarker: a partition whose log ends with a
// commit marker has its end offset past the last data record; --exit must
// still end there, and the marker is never printed.
func TestConsumeExitAfterTransactionMarker(t *testing.T) {
	addr := shared.broker(t)
	topic := uniqueTopic(t)
	mustRun(t, "", "topic", "create", topic, "-p", "1", "--brokers", addr)
	defer runCLI(t, "", "topic", "delete", topic, "--brokers", addr)

	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.TransactionalID(topic+"-txn"), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	// A new Kafka creates __transaction_state on first use and answers
	// COORDINATOR_NOT_AVAILABLE meanwhile. A probe, not testutil.Eventually:
	// a server without transactions makes the test skip below, not fail.
	for probeUntil := time.Now().Add(5 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		err = kadm.NewClient(cl).FindTxnCoordinators(ctx, topic+"-txn").Error()
		if err == nil || time.Now().After(probeUntil) {
			break
		}
	}
	if err == nil {
		err = cl.BeginTransaction()
	}
	if err == nil {
		err = cl.ProduceSync(ctx, &kgo.Record{Value: []byte("t1")}, &kgo.Record{Value: []byte("t2")}).FirstErr()
	}
	if err == nil {
		err = cl.EndTransaction(ctx, kgo.TryCommit)
	}
	if err != nil {
		if os.Getenv(testBrokersEnv) == "" {
			t.Skipf("the sluice server does not serve transactions yet: %v", err)
		}
		t.Fatalf("transactional produce: %v", err)
	}
	started := time.Now()
	out := mustRun(t, "", "consume", topic, "-e", "--brokers", addr)
	if out != "t1\nt2\n" {
		t.Fatalf("consume -e printed %q, want the two transactional records", out)
	}
	if took := time.Since(started); took > 15*time.Second {
		t.Fatalf("consume -e took %v: it waited past the commit marker", took)
	}
}
