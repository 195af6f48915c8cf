package console

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"
)

// testContents checks that pages show what the cluster holds: the
// overview's counts, the topics list, a topic's partitions and offsets,
// and the broker's log dir with the seeded partitions in it.
func testContents(t *testing.T, b *browser, s *consoleServer) {
	adm := s.admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	topics, err := adm.ListTopicsWithInternal(ctx)
	if err != nil {
		t.Fatalf("list topics: %v", err)
	}
	b.open(s.url + "/")
	if got, want := b.text("#topic-count"), strconv.Itoa(len(topics)); got != want {
		t.Errorf("overview: %s topics, the cluster has %s", got, want)
	}
	if got := b.text("#controller-id"); got != "1" {
		t.Errorf("overview: active controller %q, want 1", got)
	}

	b.open(s.url + "/topics")
	row := `#topics-table tr.topic[data-topic="` + ordersTopic + `"]`
	if got := b.text(row + " td.partitions"); got != "3" {
		t.Errorf("topics list: %s has %q partitions, want 3", ordersTopic, got)
	}
	if size := b.text(row + " td.size"); size == "" || strings.HasPrefix(size, "0 ") || size == "0" {
		t.Errorf("topics list: %s has size %q after %d records", ordersTopic, size, 3*ordersPerPartition)
	}

	b.open(s.url + "/topics/" + ordersTopic)
	for p := range 3 {
		prow := `#partitions-table tr.partition[data-partition="` + strconv.Itoa(p) + `"]`
		if got := b.text(prow + " td.leader"); got != "1" {
			t.Errorf("%s-%d: leader %q, want 1", ordersTopic, p, got)
		}
		if got := b.text(prow + " td.end-offset"); got != strconv.Itoa(ordersPerPartition) {
			t.Errorf("%s-%d: end offset %q, want %d", ordersTopic, p, got, ordersPerPartition)
		}
		if got := b.text(prow + " td.start-offset"); got != "0" {
			t.Errorf("%s-%d: start offset %q, want 0", ordersTopic, p, got)
		}
	}

	b.open(s.url + "/brokers/1")
	b.checkClean("broker 1")
	dir := `table.logdir-partitions[data-dir="` + s.dataDir + `"]`
	if !b.has(dir) {
		t.Fatalf("broker 1 shows no log dir %s: %q", s.dataDir, firstLine(b.text("#main")))
	}
	if text := b.text(dir); !strings.Contains(text, ordersTopic+"-0") {
		t.Errorf("the log dir's partitions do not name %s-0: %q", ordersTopic, text)
	}
}
