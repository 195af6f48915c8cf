package console

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/testutil"
)

// testLiveGroup joins a consumer to the group live and opens its page:
// the member and its assignment are shown, and a reset applied while it
// is there is refused with Kafka's error (a group with members takes no
// admin commit), never a 5xx, the offsets unchanged.
func testLiveGroup(t *testing.T, b *browser, s *consoleServer) {
	const group, clientID = "live", "browser-test-consumer"
	cl := s.client(t, kgo.ConsumerGroup(group), kgo.ConsumeTopics(ordersTopic), kgo.ClientID(clientID),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := s.admin(t)
	read := 0
	testutil.Eventually(t, 60*time.Second, func() bool {
		fs := cl.PollRecords(ctx, 100)
		read += fs.NumRecords()
		return read == 3*ordersPerPartition
	}, "the consumer of %s reads %d records", group, 3*ordersPerPartition)
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	before := committed(t, adm, group, ordersTopic, 0)

	b.open(s.url + "/groups/" + group)
	b.screenshot("flow-live-group")
	b.checkClean("live group")
	if ids := b.texts("#group-members tr.member td.client-id"); len(ids) != 1 || ids[0] != clientID {
		t.Errorf("members' client ids %q, want [%s]", ids, clientID)
	}
	if a := b.text("#group-members tr.member td.assigned"); !strings.Contains(a, ordersTopic) {
		t.Errorf("the member's assignment %q does not name %s", a, ordersTopic)
	}
	if lag := b.text("#group-total-lag"); lag != "0" {
		t.Errorf("total lag %q after reading and committing everything, want 0", lag)
	}

	b.choose("#reset-target", "earliest")
	b.choose("#reset-topic", ordersTopic)
	if status := b.click("#reset-preview"); status != 200 {
		t.Fatalf("preview answered %d: %s", status, firstLine(b.text("#main")))
	}
	status := b.click("#reset-apply")
	b.screenshot("flow-live-group-reset-refused")
	if status < 400 || status >= 500 {
		t.Errorf("a reset of a group with a member answered %d, want a 4xx", status)
	}
	if msg := b.text("#main"); !strings.Contains(msg, "UNKNOWN_MEMBER_ID") && !strings.Contains(strings.ToLower(msg), "member") {
		t.Errorf("the refusal does not say why: %q", msg)
	}
	b.checkNoStack("reset of a live group")
	b.checkClean("reset of a live group")
	if got := committed(t, adm, group, ordersTopic, 0); got != before {
		t.Errorf("a refused reset moved %s-0 from %d to %d", ordersTopic, before, got)
	}
}
