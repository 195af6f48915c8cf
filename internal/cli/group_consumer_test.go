package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// describeJSON runs group describe --json for one group.
func (f groupFixture) describeJSON(t *testing.T) groupDescription {
	t.Helper()
	out := f.run(t, "group", "describe", f.group, "--json")
	var descs []groupDescription
	if err := json.Unmarshal([]byte(out), &descs); err != nil {
		t.Fatalf("describe --json printed what is not a JSON array of groups (%v):\n%s", err, out)
	}
	if len(descs) != 1 || descs[0].Group != f.group {
		t.Fatalf("describe --json of %s:\n%s", f.group, out)
	}
	return descs[0]
}

// waitForState describes the group until it is in state (a consumer
// group settles after its members' heartbeats, not within the call that
// joined or left), failing after 30 s.
func (f groupFixture) waitForState(t *testing.T, state string) groupDescription {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		d := f.describeJSON(t)
		if d.State == state {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("group %s is still %s after 30 s, want %s: %+v", f.group, d.State, state, d)
		}
		time.Sleep(100 * time.Millisecond) // polling a condition, not settling
	}
}

// TestGroupConsumerProtocol: a franz-go member joined with the KIP-848
// protocol (kgo.ServerSideBalancer) is listed with type consumer, described
// with its epochs, assignor and assignments, protects its offsets from a
// reset while it is a member, and once it left the group can be reset and
// deleted.
func TestGroupConsumerProtocol(t *testing.T) {
	f := newGroupFixture(t)
	ends := f.ends(t)
	stop := f.member(t, int(ends[0]+ends[1]), kgo.ClientID("group848-test"), kgo.ServerSideBalancer())
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()

	d := f.waitForState(t, "Stable")
	if d.Type != "consumer" || d.GroupEpoch == nil || d.AssignmentEpoch == nil || *d.AssignmentEpoch != *d.GroupEpoch ||
		*d.GroupEpoch < 1 || d.Assignor != "uniform" || len(d.Members) != 1 {
		t.Fatalf("describe --json of a Stable consumer group with one member: %+v", d)
	}
	m := d.Members[0]
	want := fmt.Sprintf("[{%s [0 1]}]", f.topic)
	if m.ClientID != "group848-test" || m.MemberEpoch == nil || *m.MemberEpoch != *d.GroupEpoch ||
		fmt.Sprint(m.Assignment) != want || fmt.Sprint(m.TargetAssignment) != want || m.InstanceID != nil {
		t.Fatalf("member %+v: want client id group848-test, member epoch %d, assignment and target %s", m, *d.GroupEpoch, want)
	}
	epoch := fmt.Sprint(*d.GroupEpoch)

	out := f.run(t, "group", "list")
	if !hasRow(out, f.group, "consumer", "Stable", "consumer", "1") {
		t.Fatalf("group list does not show %s as a Stable consumer group with 1 member:\n%s", f.group, out)
	}
	for _, c := range []struct {
		args  []string
		shown bool
	}{
		{[]string{"--type", "consumer"}, true},
		{[]string{"--type", "classic"}, false},
		{[]string{"--type", "Classic,consumer"}, true},
		{[]string{"--state", "Stable", "--type", "consumer"}, true},
		{[]string{"--state", "Empty"}, false},
		{[]string{"--type", "share"}, false},
	} {
		out := f.run(t, append([]string{"group", "list"}, c.args...)...)
		if hasRowPrefix(out, f.group) != c.shown {
			t.Fatalf("group list %s: shows %s %v, want %v:\n%s", strings.Join(c.args, " "), f.group, !c.shown, c.shown, out)
		}
	}
	if err := f.fail(t, "group", "list", "--type", "queue"); !strings.Contains(err.Error(), "want consumer, classic or share") {
		t.Fatalf("group list --type queue: %v", err)
	}

	out = f.run(t, "group", "describe", f.group)
	for _, row := range [][]string{
		{"TYPE", "consumer"}, {"STATE", "Stable"}, {"GROUP-EPOCH", epoch}, {"ASSIGNMENT-EPOCH", epoch},
		{"ASSIGNOR", "uniform"}, {"MEMBERS", "1"},
		{m.MemberID, "-", "group848-test", m.Host, epoch, f.topic + ":0,1", f.topic + ":0,1"},
		{f.topic, "0", fmt.Sprint(ends[0]), fmt.Sprint(ends[0]), "0", m.MemberID},
		{f.topic, "1", fmt.Sprint(ends[1]), fmt.Sprint(ends[1]), "0", m.MemberID},
	} {
		if !hasRow(out, row...) {
			t.Fatalf("describe shows no row %q:\n%s", strings.Join(row, " "), out)
		}
	}
	out = f.run(t, "group", "describe", f.group, "--members")
	if !hasRow(out, "MEMBER-ID", "INSTANCE-ID", "CLIENT-ID", "HOST", "MEMBER-EPOCH", "ASSIGNMENT", "TARGET-ASSIGNMENT") ||
		!hasRowPrefix(out, m.MemberID) || hasRowPrefix(out, "STATE") || hasRowPrefix(out, f.topic) {
		t.Fatalf("describe --members shows more or less than the members:\n%s", out)
	}
	out = f.run(t, "group", "describe", f.group, "--state")
	if !hasRow(out, "GROUP-EPOCH", epoch) || hasRowPrefix(out, m.MemberID) || hasRowPrefix(out, f.topic) {
		t.Fatalf("describe --state shows more or less than the summary:\n%s", out)
	}

	// A classic group (made by a reset) and the consumer group in one call.
	classic := f.group + "-classic"
	f.run(t, "group", "reset-offsets", classic, "--topic", f.topic, "--to-latest", "--execute")
	t.Cleanup(func() { runCLI(t, "", "group", "delete", classic, "--brokers", f.addr) })
	out = f.run(t, "group", "describe", classic, f.group, "--json")
	var both []groupDescription
	if err := json.Unmarshal([]byte(out), &both); err != nil || len(both) != 2 {
		t.Fatalf("describe --json of two groups (%v):\n%s", err, out)
	}
	if c := both[0]; c.Group != classic || c.Type != "classic" || c.State != "Empty" || c.GroupEpoch != nil ||
		len(c.Members) != 0 || len(c.Offsets) != 2 || c.Offsets[1].CurrentOffset == nil || *c.Offsets[1].CurrentOffset != ends[1] {
		t.Fatalf("the classic group, described beside a consumer group: %+v\n%s", c, out)
	}
	if c := both[1]; c.Group != f.group || c.Type != "consumer" || len(c.Members) != 1 {
		t.Fatalf("the consumer group, described beside a classic group: %+v\n%s", c, out)
	}
	out = f.run(t, "group", "list")
	if !hasRow(out, classic, "classic", "Empty", "-", "0") || !hasRowPrefix(out, f.group) {
		t.Fatalf("group list of a classic and a consumer group:\n%s", out)
	}
	if out := f.run(t, "group", "list", "--type", "consumer"); hasRowPrefix(out, classic) {
		t.Fatalf("group list --type consumer shows the classic group %s:\n%s", classic, out)
	}

	err := f.fail(t, "group", "reset-offsets", f.group, "--topic", f.topic, "--to-earliest", "--execute")
	if !strings.Contains(err.Error(), "is Stable with 1 member(s)") {
		t.Fatalf("reset of a live consumer group: %v, want a refusal naming its state", err)
	}
	if got := f.committed(t); got != ends {
		t.Fatalf("a refused reset changed the commits to %v (were %v)", got, ends)
	}

	stop()
	stopped = true
	d = f.waitForState(t, "Empty")
	if d.Type != "consumer" || len(d.Members) != 0 {
		t.Fatalf("the consumer group after its member left: %+v", d)
	}
	out = f.run(t, "group", "reset-offsets", f.group, "--all-topics", "--to-earliest", "--execute")
	if !hasRow(out, f.group, f.topic, "0", "0") || !hasRow(out, f.group, f.topic, "1", "0") {
		t.Fatalf("reset of the empty consumer group printed:\n%s", out)
	}
	if got := f.committed(t); got != [2]int64{0, 0} {
		t.Fatalf("after the reset the group committed %v, want [0 0]", got)
	}
	out = f.run(t, "group", "describe", f.group)
	if !hasRow(out, "TYPE", "consumer") || !hasRow(out, "STATE", "Empty") ||
		!hasRow(out, f.topic, "0", "0", fmt.Sprint(ends[0]), fmt.Sprint(ends[0]), "-") {
		t.Fatalf("describe after the reset:\n%s", out)
	}
	if out := f.run(t, "group", "list", "--type", "consumer"); !hasRow(out, f.group, "consumer", "Empty", "consumer", "0") {
		t.Fatalf("group list after the member left:\n%s", out)
	}
	if out := f.run(t, "group", "delete", f.group); out != "deleted group "+f.group+"\n" {
		t.Fatalf("delete printed %q", out)
	}
	if err := f.fail(t, "group", "describe", f.group); !strings.Contains(err.Error(), "GROUP_ID_NOT_FOUND") {
		t.Fatalf("describe of a deleted consumer group: %v, want GROUP_ID_NOT_FOUND", err)
	}
}
