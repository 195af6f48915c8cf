package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/testutil"
)

// commitFor commits offsets for group as an admin (no member), which
// leaves an Empty classic group holding them.
func (n *liveNode) commitFor(t *testing.T, group string, offsets map[int32]int64) {
	t.Helper()
	os := make(kadm.Offsets)
	for p, o := range offsets {
		os.Add(kadm.Offset{Topic: "orders", Partition: p, At: o, LeaderEpoch: -1})
	}
	if err := n.adm.CommitAllOffsets(t.Context(), group, os); err != nil {
		t.Fatalf("commit for %s: %v", group, err)
	}
}

// committed is group's committed offset of orders-p, or -1.
func (n *liveNode) committed(t *testing.T, group string, p int32) int64 {
	t.Helper()
	os, err := n.adm.FetchOffsets(t.Context(), group)
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := os.Lookup("orders", p); ok {
		return o.At
	}
	return -1
}

// joinGroup runs a consumer of orders in group until the test ends and
// waits until it has read a record (so it is a Stable member). It never
// commits: the group holds no offset unless a test writes one.
func (n *liveNode) joinGroup(t *testing.T, group string, opts ...kgo.Opt) {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(n.addr), kgo.ConsumerGroup(group), kgo.ConsumeTopics("orders"),
		kgo.ClientID("member-of-" + group), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	for {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("%s consumed nothing: %v", group, err)
		}
		if fs.NumRecords() > 0 {
			return
		}
	}
}

func TestGroupPagesOnALiveNode(t *testing.T) {
	n := startLiveNode(t)
	n.fillOrders(t)
	n.commitFor(t, "g-idle", map[int32]int64{0: 10, 1: 0})
	n.joinGroup(t, "g-live")
	n.joinGroup(t, "g-next", kgo.Balancers(kgo.RangeBalancer()), kgo.ServerSideBalancer())

	reg := prometheus.NewRegistry()
	lag := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: metricLagSum, Help: "lag"}, []string{"consumergroup", "topic"})
	lag.WithLabelValues("g-idle", "orders").Set(21)
	reg.MustRegister(lag)
	c := n.console(t, Options{Metrics: reg})
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, func() bool { return len(c.history.samples()) > 0 }, "the sampler took no sample")
	h := c.Handler()

	list := mustGet(t, h, "/groups")
	for _, want := range []string{`data-group="g-idle"`, `data-group="g-live"`, `data-group="g-next"`, "Empty", "Stable", `<td class="type">consumer</td>`, `<td class="type">classic</td>`} {
		if !strings.Contains(list, want) {
			t.Errorf("groups list lacks %q", want)
		}
	}

	idle := mustGet(t, h, "/groups/g-idle")
	for _, want := range []string{`id="group-state">Empty<`, `id="group-total-lag">21<`, `data-topic="orders" data-partition="0"`, `<td class="num lag">21</td>`, `id="group-lag-chart"`} {
		if !strings.Contains(idle, want) {
			t.Errorf("g-idle page lacks %q", want)
		}
	}
	for _, g := range []string{"g-live", "g-next"} {
		page := mustGet(t, h, "/groups/"+g)
		for _, want := range []string{`id="group-state">Stable<`, "member-of-" + g, "orders: 0,1,2", `id="group-lag-note"`} {
			if !strings.Contains(page, want) {
				t.Errorf("%s page lacks %q", g, want)
			}
		}
	}
	if status, body := getPage(t, h, "/groups/no-such-group"); status != http.StatusNotFound || !strings.Contains(body, "does not exist") {
		t.Errorf("unknown group: %d\n%s", status, body)
	}

	// A group name may hold "/", "?" and spaces: its links escape them.
	n.commitFor(t, "team/a b?", map[int32]int64{0: 1})
	const path = "/groups/team%2Fa%20b%3F"
	if list := mustGet(t, h, "/groups"); !strings.Contains(list, `href="`+path+`"`) {
		t.Errorf("groups list has no escaped link %s", path)
	}
	if page := mustGet(t, h, path); !strings.Contains(page, `id="group-name">team/a b?<`) || !strings.Contains(page, `action="`+path+`/reset"`) {
		t.Errorf("the page of a group with a slash in its name:\n%s", page)
	}
	if page := mustGet(t, h, path+"/reset?target=earliest"); !strings.Contains(page, `<td class="num new">0</td>`) {
		t.Errorf("the reset preview of a group with a slash in its name:\n%s", page)
	}
}

func TestGroupOffsetResetOnALiveNode(t *testing.T) {
	n := startLiveNode(t)
	n.fillOrders(t)
	n.commitFor(t, "g-idle", map[int32]int64{0: 10, 1: 0})
	n.joinGroup(t, "g-live")
	h := n.console(t, Options{}).Handler()

	// The dry run changes nothing and shows current -> new per partition.
	page := mustGet(t, h, "/groups/g-idle/reset?target=earliest&topic=orders")
	for _, want := range []string{`id="reset-preview-table"`, "Preview (nothing changed yet)", `data-topic="orders" data-partition="0"`,
		`<td class="num current">10</td>`, `<td class="num new">0</td>`, `data-partition="2"`, `id="reset-apply-form"`} {
		if !strings.Contains(page, want) {
			t.Errorf("preview lacks %q", want)
		}
	}
	if got := n.committed(t, "g-idle", 0); got != 10 {
		t.Fatalf("the preview moved the committed offset to %d", got)
	}
	page = mustGet(t, h, "/groups/g-idle/reset?target=shift&value=-100")
	if !strings.Contains(page, "-90 is outside the partition&#39;s offsets 0 to 31: held to 0") {
		t.Errorf("shift preview does not say it was held to the log start:\n%s", page)
	}

	cookies, token := formSession(t, h, "/groups/g-idle/reset?target=offset&value=5&topic=orders")
	form := url.Values{"target": {"offset"}, "value": {"5"}, "topic": {"orders"}}
	if status, _ := post(t, h, "/groups/g-idle/reset", form, cookies); status != http.StatusForbidden {
		t.Fatalf("apply without CSRF: %d", status)
	}
	form.Set(csrfField, token)
	status, body := post(t, h, "/groups/g-idle/reset", form, cookies)
	if status != http.StatusOK || !strings.Contains(body, "Reset applied") || !strings.Contains(body, `id="reset-results"`) {
		t.Fatalf("apply: %d\n%s", status, body)
	}
	if got := n.committed(t, "g-idle", 0); got != 5 {
		t.Fatalf("orders-0 committed %d after the reset to 5", got)
	}
	if got := n.committed(t, "g-idle", 2); got != 0 {
		t.Fatalf("orders-2 (empty) committed %d, want 5 held to its end offset 0", got)
	}

	// A group with a member: the broker refuses the admin commit as Kafka
	// does (UNKNOWN_MEMBER_ID), the page says why, the offsets stay.
	cookies, token = formSession(t, h, "/groups/g-live/reset?target=earliest&topic=orders")
	status, body = post(t, h, "/groups/g-live/reset", url.Values{csrfField: {token}, "target": {"earliest"}, "topic": {"orders"}}, cookies)
	if status != http.StatusConflict || !strings.Contains(body, "UNKNOWN_MEMBER_ID") || !strings.Contains(body, "only while the group has no members") {
		t.Fatalf("reset of a live group: %d\n%s", status, body)
	}
	if !strings.Contains(body, "Reset refused") || strings.Contains(body, "Reset applied") || strings.Contains(body, "..") {
		t.Fatalf("a refused reset's page says it was applied, or doubles a period:\n%s", body)
	}
	if got := n.committed(t, "g-live", 0); got != -1 {
		t.Fatalf("a refused reset committed offset %d for g-live", got)
	}

	for q, want := range map[string]string{
		"target=sideways":              "Choose where to reset to",
		"target=offset&value=x":        "must be a whole number",
		"target=timestamp&value=never": "neither Unix milliseconds",
		"target=earliest&topic=nope":   "does not exist",
	} {
		status, body := getPage(t, h, "/groups/g-idle/reset?"+q)
		if status < 400 || status >= 500 || !strings.Contains(body, `id="reset-error"`) || !strings.Contains(body, want) {
			t.Errorf("%s: %d, want a 4xx with %q", q, status, want)
		}
	}
}

func TestGroupResetRefusedReadOnly(t *testing.T) {
	n := startLiveNode(t)
	n.fillOrders(t)
	n.commitFor(t, "g-idle", map[int32]int64{0: 10})
	h := n.console(t, Options{ReadOnly: true}).Handler()
	page := mustGet(t, h, "/groups/g-idle/reset?target=earliest")
	if !strings.Contains(page, `id="reset-read-only"`) || strings.Contains(page, `id="reset-apply-form"`) {
		t.Error("a read-only preview offers to apply")
	}
	// The page offers no apply form; a crafted post is refused all the same.
	cookies := do(t, h, "GET", "/groups/g-idle", nil).Cookies()
	status, body := post(t, h, "/groups/g-idle/reset", url.Values{csrfField: {"whatever"}, "target": {"earliest"}}, cookies)
	if status != http.StatusForbidden || !strings.Contains(body, "read-only") {
		t.Fatalf("read-only apply: %d\n%s", status, body)
	}
	if got := n.committed(t, "g-idle", 0); got != 10 {
		t.Fatalf("a read-only console moved the offset to %d", got)
	}
}

func TestReassignmentsPageOnALiveNode(t *testing.T) {
	n := startLiveNode(t)
	h := n.console(t, Options{}).Handler()
	if page := mustGet(t, h, "/reassignments"); !strings.Contains(page, `id="reassignments-none"`) {
		t.Fatalf("reassignments page:\n%s", page)
	}
}
