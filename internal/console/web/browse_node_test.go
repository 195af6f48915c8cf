package web

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/testbin"
)

// liveNode is a real single-node `sluice server` process with a console
// in front of it: the pages' tests run against a real broker. (A test of
// this package may not import node or testcluster, higher tiers; the
// binary is a process of its own.)
type liveNode struct {
	addr string
	cl   *kgo.Client
	adm  *kadm.Client
}

// startLiveNode starts the server; skipped with -short.
func startLiveNode(t *testing.T) *liveNode {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a sluice server process")
	}
	bin := testbin.Build(t)
	srv := testbin.StartServer(t, bin, testbin.ServerConfig{DataDir: t.TempDir()})
	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return &liveNode{addr: srv.Addr(), cl: cl, adm: kadm.NewClient(cl)}
}

// console builds a console of the node.
func (n *liveNode) console(t *testing.T, opts Options) *Console {
	t.Helper()
	opts.Bootstrap = n.addr
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// createTopic makes a topic and waits until its partitions have leaders.
func (n *liveNode) createTopic(t *testing.T, topic string, partitions int32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := n.adm.CreateTopic(ctx, partitions, 1, nil, topic); err != nil {
		t.Fatalf("create %s: %v", topic, err)
	}
}

// produce writes recs synchronously.
func (n *liveNode) produce(t *testing.T, recs ...*kgo.Record) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := n.cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

// browseBase is the first record's timestamp; record i has base + i s.
var browseBase = time.UnixMilli(1_700_000_000_000)

// fillOrders writes 30 JSON records with keys k-0..k-29 to orders-0 (one
// with a header), then a record whose value is not UTF-8 (offset 30).
func (n *liveNode) fillOrders(t *testing.T) {
	n.createTopic(t, "orders", 3)
	var recs []*kgo.Record
	for i := range 30 {
		r := &kgo.Record{Topic: "orders", Partition: 0, Key: fmt.Appendf(nil, "k-%d", i), Value: fmt.Appendf(nil, `{"n":%d,"tag":"t%d"}`, i, i),
			Timestamp: browseBase.Add(time.Duration(i) * time.Second)}
		if i == 3 {
			r.Headers = []kgo.RecordHeader{{Key: "trace", Value: []byte("abc-123")}}
		}
		recs = append(recs, r)
	}
	recs = append(recs, &kgo.Record{Topic: "orders", Partition: 0, Key: []byte("bin"), Value: []byte{'o', 'k', 0xff, 0xfe, '<', 'b', '>'},
		Timestamp: browseBase.Add(30 * time.Second)})
	n.produce(t, recs...)
}

// getPage fetches a console page.
func getPage(t *testing.T, h http.Handler, target string) (int, string) {
	t.Helper()
	resp := do(t, h, "GET", target, nil)
	return resp.StatusCode, readBody(t, resp)
}

var offsetAttr = regexp.MustCompile(`class="record" data-offset="(\d+)"`)

// offsetsShown lists the offsets of the records on a browser page, in order.
func offsetsShown(body string) string {
	var out []string
	for _, m := range offsetAttr.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return strings.Join(out, ",")
}

func TestBrowserOnALiveNode(t *testing.T) {
	n := startLiveNode(t)
	n.fillOrders(t)
	h := n.console(t, Options{}).Handler()

	pages := []struct {
		name, query string
		offsets     string
		contains    []string
	}{
		{"at an offset", "topic=orders&offset=5&limit=3", "5,6,7", []string{"Read 3 records, stopped at offset 8", `id="browse-newer"`}},
		{"by timestamp", "topic=orders&mode=timestamp&ts=" + url.QueryEscape(browseBase.Add(10*time.Second).UTC().Format(time.RFC3339)) + "&limit=2", "10,11", nil},
		{"newest first", "topic=orders&mode=newest&limit=4", "30,29,28,27", []string{`id="browse-older"`, "before=27"}},
		{"newest first, older page", "topic=orders&mode=newest&before=2&limit=4", "1,0", []string{"reached the log start offset"}},
		{"search by key", "topic=orders&q=k-17&in=key", "17", []string{"Scanned 31 records, 1 matched, stopped at offset 31"}},
		{"search newest first", "topic=orders&mode=newest&q=tag&in=value&limit=2", "29,28", []string{"Scanned 31 records, 30 matched, stopped at offset 28"}},
		{"search stops at the scan limit", "topic=orders&q=nothing-like-this&scan=10", "", []string{"Scanned 10 records, 0 matched, stopped at offset 10: reached the scan limit"}},
		{"search value not key", "topic=orders&q=k-17&in=value", "", []string{"0 matched"}},
		{"json", "topic=orders&offset=3&limit=1&render=json", "3", []string{"&#34;n&#34;: 3,", "trace", "abc-123", "2023-11-14 22:13:23.000 UTC", "CreateTime"}},
		{"hex", "topic=orders&offset=3&limit=1&render=hex", "3", []string{"7b 22 6e 22"}},
		{"not UTF-8", "topic=orders&offset=30&limit=1", "30", []string{`ok\xff\xfe&lt;b&gt;`, "not UTF-8"}},
		{"huge limit clamped", "topic=orders&limit=100000000000", "", []string{"clamped to 500"}},
		{"offset at the end", "topic=orders&offset=31", "", []string{"Read 0 records"}},
	}
	for _, p := range pages {
		t.Run(p.name, func(t *testing.T) {
			status, body := getPage(t, h, "/messages?"+p.query)
			if status != http.StatusOK {
				t.Fatalf("status %d:\n%s", status, body)
			}
			if !utf8.ValidString(body) || strings.Contains(body, "<b>") {
				t.Fatal("the page is not valid UTF-8 or carries a record's bytes as markup")
			}
			if got := offsetsShown(body); p.offsets != "" && got != p.offsets {
				t.Fatalf("offsets shown %q, want %q", got, p.offsets)
			}
			for _, want := range p.contains {
				if !strings.Contains(body, want) {
					t.Errorf("page lacks %q", want)
				}
			}
		})
	}
	if got := offsetsShown(mustGet(t, h, "/messages?topic=orders&mode=newest&limit=100000000000")); !strings.HasPrefix(got, "30,29,") || strings.Count(got, ",") != 30 {
		t.Errorf("clamped newest page shows %q, want all 31 records newest first", got)
	}
}

func mustGet(t *testing.T, h http.Handler, target string) string {
	t.Helper()
	status, body := getPage(t, h, target)
	if status != http.StatusOK {
		t.Fatalf("%s: status %d:\n%s", target, status, body)
	}
	return body
}

func TestBrowserBadInputOnALiveNode(t *testing.T) {
	n := startLiveNode(t)
	n.fillOrders(t)
	h := n.console(t, Options{}).Handler()
	cases := []struct {
		name, query, want string
	}{
		{"offset past the end", "topic=orders&offset=1000", "offset 1000 is past the end of orders-0: valid offsets are 0 to 30"},
		{"newest before past the end", "topic=orders&mode=newest&before=99", "offset 99 is past the end"},
		{"negative partition", "topic=orders&partition=-1", "partition -1 is negative"},
		{"unknown partition", "topic=orders&partition=7", "has partitions 0 to 2"},
		{"unknown topic", "topic=no-such-topic", "does not exist"},
		{"malformed timestamp", "topic=orders&mode=timestamp&ts=last+tuesday", "is neither Unix milliseconds nor a time"},
		{"bad limit", "topic=orders&limit=-3", "limit must be at least 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, body := getPage(t, h, "/messages?"+c.query)
			if status != http.StatusBadRequest {
				t.Fatalf("status %d, want 400:\n%s", status, body)
			}
			if !strings.Contains(body, `id="browse-error"`) || !strings.Contains(body, c.want) {
				t.Fatalf("page lacks the message %q:\n%s", c.want, body)
			}
			if !strings.Contains(body, `id="browse-form"`) {
				t.Fatal("the form is not shown again")
			}
			if strings.Contains(body, `id="browse-summary"`) {
				t.Fatal("a refused page shows a summary of records it did not read")
			}
		})
	}
	// The form alone, without a topic.
	if body := mustGet(t, h, "/messages"); !strings.Contains(body, `<option value="orders">`) {
		t.Errorf("the form does not offer the topics")
	}
}

// TestBrowserEndsAtATransactionMarker: a partition whose last offset is a
// commit marker gives a page that reads past the marker to the end (the
// browser's consumer keeps control records and passes them) without
// showing it, instead of waiting for a record that never comes.
func TestBrowserEndsAtATransactionMarker(t *testing.T) {
	n := startLiveNode(t)
	n.createTopic(t, "tx", 1)
	cl, err := kgo.NewClient(kgo.SeedBrokers(n.addr), kgo.TransactionalID("console-test"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "tx", Value: fmt.Appendf(nil, "t%d", i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	h := n.console(t, Options{}).Handler()
	for _, c := range []struct{ query, offsets, stop string }{
		{"topic=tx", "0,1,2", "Read 3 records, stopped at offset 4: reached the end of the range"},
		{"topic=tx&q=t1", "1", "Scanned 3 records, 1 matched, stopped at offset 4: reached the end of the range"},
		{"topic=tx&mode=newest", "2,1,0", "reached the log start offset"},
	} {
		body := mustGet(t, h, "/messages?"+c.query)
		if got := offsetsShown(body); got != c.offsets || !strings.Contains(body, "Partition 0 holds offsets 0 to 3.") || !strings.Contains(body, c.stop) {
			t.Errorf("%s: offsets %q, want %q; the page should say %q:\n%s", c.query, got, c.offsets, c.stop, body)
		}
	}
}
