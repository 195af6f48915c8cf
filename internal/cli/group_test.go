package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// groupFixture is a 2-partition topic holding 5 records in partition 0 and
// 3 in partition 1, and the name of a group for it.
type groupFixture struct {
	addr, topic, group string
	b                  []string
}

func newGroupFixture(t *testing.T) groupFixture {
	t.Helper()
	addr := shared.broker(t)
	f := groupFixture{addr: addr, topic: uniqueTopic(t), b: []string{"--brokers", addr}}
	f.group = f.topic + "-g"
	f.run(t, "topic", "create", f.topic, "-p", "2")
	t.Cleanup(func() { runCLI(t, "", "topic", "delete", f.topic, "--brokers", addr) })
	requireDataPlane(t, addr, f.topic) // one probe record, in either partition
	f.produce(t, 0, 5)
	f.produce(t, 1, 3)
	return f
}

func (f groupFixture) run(t *testing.T, args ...string) string {
	t.Helper()
	return mustRun(t, "", append(args, f.b...)...)
}

func (f groupFixture) fail(t *testing.T, args ...string) error {
	t.Helper()
	out, err := runCLI(t, "", append(args, f.b...)...)
	if err == nil {
		t.Fatalf("sluice %s succeeded, printing:\n%s", strings.Join(args, " "), out)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Fatalf("error is not one line: %q", err)
	}
	return err
}

func (f groupFixture) produce(t *testing.T, partition, n int) {
	t.Helper()
	mustRun(t, strings.Repeat("x\n", n), append([]string{"produce", f.topic, "--partition", fmt.Sprint(partition)}, f.b...)...)
}

// ends returns the log end offsets of partitions 0 and 1 (the probe record
// of requireDataPlane landed in one of them).
func (f groupFixture) ends(t *testing.T) [2]int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, err := kadm.NewClient(cl).ListEndOffsets(ctx, f.topic)
	if err != nil {
		t.Fatal(err)
	}
	var out [2]int64
	for p := range 2 {
		o, ok := l.Lookup(f.topic, int32(p))
		if !ok || o.Err != nil {
			t.Fatalf("end offset of %s/%d: %v", f.topic, p, o.Err)
		}
		out[p] = o.Offset
	}
	return out
}

// committed returns the group's committed offsets of partitions 0 and 1
// (-1 when none).
func (f groupFixture) committed(t *testing.T) [2]int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := kadm.NewClient(cl).FetchOffsets(ctx, f.group)
	if err != nil {
		t.Fatal(err)
	}
	out := [2]int64{-1, -1}
	for p := range 2 {
		if o, ok := r.Lookup(f.topic, int32(p)); ok && o.Err == nil {
			out[p] = o.At
		}
	}
	return out
}

// member joins the group with a kgo consumer (client id group-test unless
// opts say otherwise), reads every record and commits; stop leaves the
// group.
func (f groupFixture) member(t *testing.T, records int, opts ...kgo.Opt) (stop func()) {
	t.Helper()
	opts = append([]kgo.Opt{kgo.SeedBrokers(f.addr), kgo.ClientID("group-test"),
		kgo.ConsumerGroup(f.group), kgo.ConsumeTopics(f.topic), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, opts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for got := 0; got < records; {
		fetches := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			cl.Close()
			t.Fatalf("group member read %d of %d records: %v", got, records, err)
		}
		got += fetches.NumRecords()
	}
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		cl.Close()
		t.Fatalf("group member commit: %v", err)
	}
	return cl.Close
}

func TestGroupDescribeMembersAndLag(t *testing.T) {
	f := newGroupFixture(t)
	ends := f.ends(t)
	stop := f.member(t, int(ends[0]+ends[1]))
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()

	out := f.run(t, "group", "list")
	if !hasRow(out, f.group, "classic", "Stable", "consumer", "1") {
		t.Fatalf("group list does not show %s Stable with 1 member:\n%s", f.group, out)
	}
	if out := f.run(t, "group", "list", "--state", "Empty"); strings.Contains(out, f.group) {
		t.Fatalf("group list --state Empty shows the Stable group %s:\n%s", f.group, out)
	}
	if out := f.run(t, "group", "list", "--state", "Stable"); !hasRow(out, f.group, "classic", "Stable", "consumer", "1") {
		t.Fatalf("group list --state Stable does not show %s:\n%s", f.group, out)
	}
	out = f.run(t, "group", "describe", f.group)
	if !hasRow(out, "TYPE", "classic") || !hasRow(out, "STATE", "Stable") || !hasRow(out, "MEMBERS", "1") {
		t.Fatalf("describe summary:\n%s", out)
	}
	member := rowStartingWith(out, "group-test")
	if member == nil {
		// The member id starts with the client id in franz-go.
		t.Fatalf("describe shows no member with client id group-test:\n%s", out)
	}
	if got := member[len(member)-1]; got != f.topic+":0,1" {
		t.Fatalf("member assignment %q, want %s:0,1:\n%s", got, f.topic, out)
	}
	for p := range 2 {
		if !hasRow(out, f.topic, fmt.Sprint(p), fmt.Sprint(ends[p]), fmt.Sprint(ends[p]), "0", member[0]) {
			t.Fatalf("describe: no row for partition %d at offset %d, lag 0, member %s:\n%s", p, ends[p], member[0], out)
		}
	}

	err := f.fail(t, "group", "reset-offsets", f.group, "--topic", f.topic, "--to-earliest", "--execute")
	if !strings.Contains(err.Error(), "is Stable with 1 member(s)") {
		t.Fatalf("reset of a live group: %v, want a refusal naming its state", err)
	}
	if err := f.fail(t, "group", "delete", f.group); !strings.Contains(err.Error(), "NON_EMPTY_GROUP") {
		t.Fatalf("delete of a live group: %v, want NON_EMPTY_GROUP", err)
	}

	stop()
	stopped = true
	f.produce(t, 0, 2)
	out = f.run(t, "group", "describe", f.group)
	if !hasRow(out, "STATE", "Empty") || !hasRow(out, "MEMBERS", "0") {
		t.Fatalf("describe after the member left:\n%s", out)
	}
	if !hasRow(out, f.topic, "0", fmt.Sprint(ends[0]), fmt.Sprint(ends[0]+2), "2", "-") {
		t.Fatalf("describe: lag of partition 0 is not 2 after two more records:\n%s", out)
	}
	if out := f.run(t, "group", "delete", f.group); out != "deleted group "+f.group+"\n" {
		t.Fatalf("delete printed %q", out)
	}
	if err := f.fail(t, "group", "describe", f.group); !strings.Contains(err.Error(), "GROUP_ID_NOT_FOUND") {
		t.Fatalf("describe of a deleted group: %v, want GROUP_ID_NOT_FOUND", err)
	}
	if out := f.run(t, "group", "list"); strings.Contains(out, f.group) {
		t.Fatalf("group list still shows the deleted group:\n%s", out)
	}
}

func TestGroupResetOffsets(t *testing.T) {
	f := newGroupFixture(t)
	ends := f.ends(t)
	reset := func(args ...string) string {
		return f.run(t, append([]string{"group", "reset-offsets", f.group}, args...)...)
	}
	plan := func(offsets ...int64) string {
		var b strings.Builder
		fmt.Fprintln(&b, "GROUP TOPIC PARTITION NEW-OFFSET")
		for p, o := range offsets {
			fmt.Fprintf(&b, "%s %s %d %d\n", f.group, f.topic, p, o)
		}
		return b.String()
	}
	same := func(what, out, want string) {
		t.Helper()
		var norm []string
		for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			norm = append(norm, strings.Join(strings.Fields(line), " "))
		}
		if got := strings.Join(norm, "\n") + "\n"; got != want {
			t.Fatalf("%s printed\n%s\nwant\n%s", what, got, want)
		}
	}
	expect := func(what string, want [2]int64) {
		t.Helper()
		if got := f.committed(t); got != want {
			t.Fatalf("after %s the group committed %v, want %v", what, got, want)
		}
	}

	// A group that does not exist yet: the plan only, then created by --execute.
	same("dry run", reset("--topic", f.topic, "--to-latest"), plan(ends[0], ends[1]))
	expect("a dry run", [2]int64{-1, -1})
	same("--dry-run", reset("--topic", f.topic, "--to-latest", "--dry-run"), plan(ends[0], ends[1]))
	expect("--dry-run", [2]int64{-1, -1})
	same("--to-latest --execute", reset("--topic", f.topic, "--to-latest", "--execute"), plan(ends[0], ends[1]))
	expect("--to-latest --execute", ends)
	if out := f.run(t, "group", "list"); !hasRow(out, f.group, "classic", "Empty", "-", "0") {
		t.Fatalf("a group created by a reset is not listed Empty, without protocol type or members:\n%s", out)
	}

	same("--shift-by -2", reset("--all-topics", "--shift-by", "-2", "--execute"), plan(ends[0]-2, ends[1]-2))
	expect("--shift-by -2", [2]int64{ends[0] - 2, ends[1] - 2})
	same("--shift-by -100 (kept at the log start)", reset("--all-topics", "--shift-by", "-100", "--execute"), plan(0, 0))
	same("--to-offset 4 (partition 1 kept at its end)", reset("--topic", f.topic, "--to-offset", "4", "--execute"), plan(4, min(4, ends[1])))
	expect("--to-offset 4", [2]int64{4, min(4, ends[1])})

	out := reset("--topic", f.topic+":1", "--to-earliest", "--execute")
	if want := fmt.Sprintf("GROUP TOPIC PARTITION NEW-OFFSET\n%s %s 1 0\n", f.group, f.topic); hasRow(out, f.group, f.topic, "0", "0") || !hasRow(out, f.group, f.topic, "1", "0") {
		t.Fatalf("--topic %s:1 printed\n%s\nwant\n%s", f.topic, out, want)
	}
	expect("--topic T:1 --to-earliest", [2]int64{4, 0})

	same("--to-datetime in the future", reset("--all-topics", "--to-datetime", "2100-01-01T00:00:00Z", "--execute"), plan(ends[0], ends[1]))
	same("--to-datetime in the past", reset("--all-topics", "--to-datetime", "2001-01-01T00:00:00+02:00", "--execute"), plan(0, 0))
	expect("--to-datetime in the past", [2]int64{0, 0})

	for _, bad := range [][]string{
		{"--topic", f.topic}, // no strategy
		{"--topic", f.topic, "--to-earliest", "--to-latest"}, // two strategies
		{"--to-earliest"}, // no topic selection
		{"--topic", f.topic, "--to-earliest", "--dry-run", "--execute"},
		{"--topic", f.topic, "--to-datetime", "yesterday"},
		{"--topic", f.topic, "--to-offset", "-1"},
		{"--topic", f.topic + ":x", "--to-earliest"},
		{"--topic", f.topic + ":7", "--to-earliest"},
	} {
		f.fail(t, append([]string{"group", "reset-offsets", f.group}, bad...)...)
	}
	err := f.fail(t, "group", "reset-offsets", f.group, "--topic", f.topic+"-missing", "--to-earliest")
	if !strings.Contains(err.Error(), "UNKNOWN_TOPIC_OR_PARTITION") {
		t.Fatalf("reset of a missing topic: %v, want UNKNOWN_TOPIC_OR_PARTITION", err)
	}
	expect("refused resets", [2]int64{0, 0})
	f.run(t, "group", "delete", f.group)
	err = f.fail(t, "group", "reset-offsets", f.group, "--all-topics", "--to-earliest")
	if !strings.Contains(err.Error(), "no committed offsets") {
		t.Fatalf("--all-topics of a group without commits: %v", err)
	}
}

func TestGroupDeleteUnknown(t *testing.T) {
	addr := shared.broker(t)
	_, err := runCLI(t, "", "group", "delete", uniqueTopic(t), "--brokers", addr)
	if err == nil || !strings.Contains(err.Error(), "GROUP_ID_NOT_FOUND") {
		t.Fatalf("delete of an unknown group: %v, want GROUP_ID_NOT_FOUND", err)
	}
}

// rowStartingWith returns the fields of the first line whose first field
// starts with prefix.
func rowStartingWith(out, prefix string) []string {
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(f[0], prefix) {
			return f
		}
	}
	return nil
}
