package console

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/sluice-io/sluice/internal/testutil"
)

// Names of what the browser makes.
const (
	madeTopic      = "made-in-browser"
	madePartitions = 4
	madeKey        = "browser-key-1"
	madeValue      = "hello from chromium"
	madePartition  = "2"
)

// testCreateTopic creates a topic through the topics page's form and
// checks that the cluster has it with the partitions asked for.
func testCreateTopic(t *testing.T, b *browser, s *consoleServer) {
	b.open(s.url + "/topics")
	b.typeIn("create topic form", map[string]string{
		"#create-topic-name":       madeTopic,
		"#create-topic-partitions": "4",
	})
	if status := b.click("#create-topic-submit"); status != 200 {
		t.Fatalf("create topic answered %d: %s", status, firstLine(b.bodyText()))
	}
	b.screenshot("flow-topic-created")
	b.checkClean("create topic")
	if !b.has("#topic-created") {
		t.Errorf("after the create: no notice #topic-created on %q", firstLine(b.bodyText()))
	}
	if n := b.count("#partitions-table tr.partition"); n != madePartitions {
		t.Errorf("the new topic's page lists %d partitions, want %d", n, madePartitions)
	}
	adm := s.admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	testutil.Eventually(t, 30*time.Second, func() bool { return topicLed(ctx, adm, madeTopic, madePartitions) },
		"topic %s with %d led partitions, as the form asked", madeTopic, madePartitions)

	// Kafka's own refusal comes back as a message, not a 500.
	b.open(s.url + "/topics")
	b.typeIn("create an existing topic", map[string]string{"#create-topic-name": ordersTopic})
	status := b.click("#create-topic-submit")
	b.screenshot("flow-topic-exists")
	if status < 400 || status >= 500 {
		t.Errorf("creating %s again answered %d, want a 4xx", ordersTopic, status)
	}
	if text := b.bodyText(); !strings.Contains(strings.ToLower(text), "already exists") {
		t.Errorf("creating %s again: the page does not say it exists: %q", ordersTopic, firstLine(text))
	}
	b.checkClean("create an existing topic")
	b.checkNoStack("create an existing topic")
}

// testProduce writes a message through the produce form and checks where
// the page says it went against the cluster's end offsets.
func testProduce(t *testing.T, b *browser, s *consoleServer) {
	b.open(s.url + "/produce?topic=" + madeTopic)
	b.typeIn("produce form", map[string]string{
		"#produce-partition-input": madePartition,
		"#produce-key":             madeKey,
		"#produce-value":           madeValue,
		"#produce-headers":         "origin=chromium",
	})
	if status := b.click("#produce-submit"); status != 200 {
		t.Fatalf("produce answered %d: %s", status, firstLine(b.bodyText()))
	}
	b.screenshot("flow-produced")
	b.checkClean("produce")
	if got := b.text("#produce-partition"); got != madePartition {
		t.Errorf("produced to partition %q, want %s", got, madePartition)
	}
	if got := b.text("#produce-offset"); got != "0" {
		t.Errorf("produced at offset %q, want 0 (the first record of the partition)", got)
	}
	ends := endOffsets(t, s.admin(t), madeTopic)
	if o, _ := ends.Lookup(madeTopic, 2); o.Offset != 1 {
		t.Errorf("end offset of %s-2 is %d after the produce, want 1", madeTopic, o.Offset)
	}
}

// testBrowse finds the produced message in the message browser by a key
// search and by its offset, through the browser's form.
func testBrowse(t *testing.T, b *browser, s *consoleServer) {
	b.open(s.url + "/messages")
	b.typeIn("browse by key", map[string]string{
		"#browse-topic":     madeTopic,
		"#browse-partition": madePartition,
		"#browse-search":    madeKey,
	})
	b.choose("#browse-in", "key")
	if status := b.click("#browse-submit"); status != 200 {
		t.Fatalf("search answered %d: %s", status, firstLine(b.bodyText()))
	}
	b.screenshot("flow-browse-key")
	b.checkClean("browse by key")
	checkOneRecord(t, b, "by key", "0", madeKey, madeValue)
	if h := strings.Join(b.texts("#browse-records td.headers"), " "); !strings.Contains(h, "origin") || !strings.Contains(h, "chromium") {
		t.Errorf("by key: headers %q, want origin: chromium", h)
	}
	if sum := b.text("#browse-summary"); !strings.Contains(sum, "1") {
		t.Errorf("by key: summary %q does not count the match", sum)
	}

	// A key that is nowhere matches nothing, and says what it scanned.
	b.open(s.url + "/messages?topic=" + ordersTopic + "&partition=1&q=no-such-key&in=key")
	if n := b.count("#browse-records tr.record"); n != 0 {
		t.Errorf("a search for a missing key shows %d records", n)
	}
	if !b.has("#browse-summary") {
		t.Errorf("a search for a missing key has no summary: %q", firstLine(b.bodyText()))
	}

	b.open(s.url + "/messages")
	b.typeIn("browse by offset", map[string]string{
		"#browse-topic":     ordersTopic,
		"#browse-partition": "1",
		"#browse-offset":    "3",
		"#browse-limit":     "1",
	})
	b.choose("#browse-mode", "offset")
	if status := b.click("#browse-submit"); status != 200 {
		t.Fatalf("browse by offset answered %d: %s", status, firstLine(b.bodyText()))
	}
	b.screenshot("flow-browse-offset")
	b.checkClean("browse by offset")
	checkOneRecord(t, b, "by offset", "3", "customer-1-3", "order 3 of partition 1")

	// From a time before the produce: the produced record comes first.
	since := time.Now().Add(-10 * time.Minute).UTC().Format(time.RFC3339)
	b.open(s.url + "/messages?topic=" + madeTopic + "&partition=" + madePartition + "&mode=timestamp&ts=" + since)
	b.screenshot("flow-browse-timestamp")
	b.checkClean("browse by timestamp")
	checkOneRecord(t, b, "by timestamp", "0", madeKey, madeValue)

	// Newest first: the last two records of orders-1, last first.
	b.open(s.url + "/messages?topic=" + ordersTopic + "&partition=1&mode=newest&limit=2")
	b.screenshot("flow-browse-newest")
	b.checkClean("browse newest first")
	if got := strings.Join(b.texts("#browse-records tr.record td.offset"), ","); got != "9,8" {
		t.Errorf("newest first: offsets %s, want 9,8", got)
	}

	// The JSON rendering of a JSON value, with its header.
	b.open(s.url + "/messages?topic=" + eventsTopic + "&render=json")
	b.screenshot("flow-browse-json")
	b.checkClean("browse JSON")
	if v := strings.Join(b.texts("#browse-records td.value"), "\n"); !strings.Contains(v, `"kind": "click"`) {
		t.Errorf("JSON rendering: values %q, want pretty-printed JSON", v)
	}
}

// checkOneRecord checks that the page shows exactly one record with
// offset, key and value.
func checkOneRecord(t *testing.T, b *browser, what, offset, key, value string) {
	t.Helper()
	if n := b.count("#browse-records tr.record"); n != 1 {
		t.Fatalf("%s: %d records shown, want 1: %q", what, n, firstLine(b.text("#main")))
	}
	if got := b.text("#browse-records tr.record td.offset"); got != offset {
		t.Errorf("%s: offset %q, want %s", what, got, offset)
	}
	if got := b.text("#browse-records tr.record td.key"); got != key {
		t.Errorf("%s: key %q, want %q", what, got, key)
	}
	if got := b.text("#browse-records tr.record td.value"); got != value {
		t.Errorf("%s: value %q, want %q", what, got, value)
	}
}

// testResetOffsets shifts the group billing back by 2 on orders: the
// preview shows current and new offsets and changes nothing; applying it
// commits them (read back with kadm).
func testResetOffsets(t *testing.T, b *browser, s *consoleServer) {
	adm := s.admin(t)
	b.open(s.url + "/groups/" + billingGroup)
	b.choose("#reset-target", "shift")
	b.choose("#reset-topic", ordersTopic)
	b.typeIn("reset form", map[string]string{"#reset-value": "-2"})
	if status := b.click("#reset-preview"); status != 200 {
		t.Fatalf("reset preview answered %d: %s", status, firstLine(b.bodyText()))
	}
	b.screenshot("flow-reset-preview")
	b.checkClean("reset preview")
	want := map[string][2]string{"0": {"4", "2"}, "1": {"7", "5"}}
	checkResetRows(t, b, want)
	if got := committed(t, adm, billingGroup, ordersTopic, 0); got != 4 {
		t.Fatalf("the preview changed the committed offset of %s-0 to %d", ordersTopic, got)
	}
	if status := b.click("#reset-apply"); status != 200 {
		t.Fatalf("reset apply answered %d: %s", status, firstLine(b.bodyText()))
	}
	b.screenshot("flow-reset-applied")
	b.checkClean("reset apply")
	if errs := b.texts("#reset-results .error"); len(errs) != 0 {
		t.Errorf("reset results show errors: %q", errs)
	}
	for p, at := range map[int32]int64{0: 2, 1: 5} {
		if got := committed(t, adm, billingGroup, ordersTopic, p); got != at {
			t.Errorf("after the reset %s-%d is committed at %d, want %d", ordersTopic, p, got, at)
		}
	}
}

// checkResetRows checks the preview's current and new offsets of orders'
// partitions.
func checkResetRows(t *testing.T, b *browser, want map[string][2]string) {
	t.Helper()
	for p, w := range want {
		row := `#reset-preview-table tr.reset-row[data-topic="` + ordersTopic + `"][data-partition="` + p + `"]`
		if !b.has(row) {
			t.Errorf("preview has no row for %s-%s: %q", ordersTopic, p, firstLine(b.text("#main")))
			continue
		}
		cur, next := b.text(row+" td.current"), b.text(row+" td.new")
		if cur != w[0] || next != w[1] {
			t.Errorf("preview of %s-%s: %s -> %s, want %s -> %s", ordersTopic, p, cur, next, w[0], w[1])
		}
	}
}

// endOffsets are topic's end offsets.
func endOffsets(t *testing.T, adm *kadm.Client, topic string) kadm.ListedOffsets {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	o, err := adm.ListEndOffsets(ctx, topic)
	if err == nil {
		err = o.Error()
	}
	if err != nil {
		t.Fatalf("end offsets of %s: %v", topic, err)
	}
	return o
}
