package web

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/clock"
)

// fakeSource serves records of offsets [0, n) (with gaps where skip says)
// and counts every record it hands out.
type fakeSource struct {
	mu     sync.Mutex
	recs   []*kgo.Record
	pos    int
	handed int
	maxes  []int
}

func newFakeSource(n int64, skip func(int64) bool) *fakeSource {
	s := &fakeSource{}
	for o := int64(0); o < n; o++ {
		if skip != nil && skip(o) {
			continue
		}
		s.recs = append(s.recs, &kgo.Record{Offset: o, Key: fmt.Appendf(nil, "k%d", o), Value: fmt.Appendf(nil, "value-%d", o)})
	}
	return s
}

func (s *fakeSource) SeekTo(offset int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pos = len(s.recs)
	for i, r := range s.recs {
		if r.Offset >= offset {
			s.pos = i
			break
		}
	}
}

func (s *fakeSource) Poll(ctx context.Context, max int) ([]*kgo.Record, error) {
	s.mu.Lock()
	s.maxes = append(s.maxes, max)
	if s.pos < len(s.recs) {
		end := min(s.pos+max, len(s.recs))
		out := s.recs[s.pos:end]
		s.handed += len(out)
		s.pos = end
		s.mu.Unlock()
		return out, nil
	}
	s.mu.Unlock()
	<-ctx.Done()
	return nil, ctx.Err()
}

func all(*kgo.Record) bool { return true }

func TestScanStopsExactlyAtScanLimit(t *testing.T) {
	src := newFakeSource(100_000, nil)
	res, err := scan(context.Background(), clock.Real{}, src, scanRange{From: 0, To: 100_000, MaxScan: 1234, MaxResults: 10}, func(*kgo.Record) bool { return false }, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if res.Scanned != 1234 || res.Stop != stopScan || res.Next != 1234 || res.Matched != 0 {
		t.Fatalf("scanned %d, stop %q, next %d, matched %d; want 1234, scan limit, 1234, 0", res.Scanned, res.Stop, res.Next, res.Matched)
	}
	if src.handed != 1234 {
		t.Fatalf("source handed out %d records for a scan limit of 1234", src.handed)
	}
	for _, m := range src.maxes {
		if m > pollBatch {
			t.Fatalf("a poll asked for %d records, more than %d", m, pollBatch)
		}
	}
}

func TestScanStopsAtResultsLimit(t *testing.T) {
	src := newFakeSource(1000, nil)
	res, err := scan(context.Background(), clock.Real{}, src, scanRange{From: 0, To: 1000, MaxScan: 1000, MaxResults: 5}, all, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Records) != 5 || res.Stop != stopResults || res.Next != 5 || res.Scanned != 5 {
		t.Fatalf("got %d records, stop %q, next %d, scanned %d", len(res.Records), res.Stop, res.Next, res.Scanned)
	}
}

func TestScanKeepNewestKeepsTheLastMatches(t *testing.T) {
	src := newFakeSource(100, nil)
	even := func(r *kgo.Record) bool { return r.Offset%2 == 0 }
	res, err := scan(context.Background(), clock.Real{}, src, scanRange{From: 0, To: 100, MaxScan: 1000, MaxResults: 3, KeepNewest: true}, even, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, r := range res.Records {
		got = append(got, r.Offset)
	}
	if fmt.Sprint(got) != "[94 96 98]" || res.Matched != 50 || res.Stop != stopEnd {
		t.Fatalf("kept %v, matched %d, stop %q; want [94 96 98], 50, end", got, res.Matched, res.Stop)
	}
}

func TestScanSkipsRecordsOutsideTheRange(t *testing.T) {
	src := newFakeSource(50, nil)
	res, err := scan(context.Background(), clock.Real{}, src, scanRange{From: 10, To: 20, MaxScan: 100, MaxResults: 100}, all, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if res.Scanned != 10 || res.Records[0].Offset != 10 || res.Next != 20 || res.Stop != stopEnd {
		t.Fatalf("scanned %d from %d, next %d, stop %q", res.Scanned, res.Records[0].Offset, res.Next, res.Stop)
	}
}

func TestScanEndsIdleWhenTheRangeEndsInAGap(t *testing.T) {
	// Offsets 8 and 9 hold no record (transaction markers): the scan
	// waits for them only as long as idle, then reports it.
	src := newFakeSource(10, func(o int64) bool { return o >= 8 })
	res, err := scan(context.Background(), clock.Real{}, src, scanRange{From: 0, To: 10, MaxScan: 100, MaxResults: 100}, all, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop != stopIdle || res.Scanned != 8 || res.Next != 8 {
		t.Fatalf("stop %q, scanned %d, next %d", res.Stop, res.Scanned, res.Next)
	}
}

func TestScanReturnsTheCallersDeadline(t *testing.T) {
	src := newFakeSource(0, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := scan(ctx, clock.Real{}, src, scanRange{From: 0, To: 10, MaxScan: 100, MaxResults: 100}, all, time.Hour); err == nil {
		t.Fatal("a scan whose context ended reported no error")
	}
}

func TestMatcherLooksWhereAsked(t *testing.T) {
	rec := &kgo.Record{Key: []byte("order-17"), Value: []byte(`{"state":"paid"}`)}
	cases := []struct {
		search string
		in     searchIn
		want   bool
	}{
		{"order", searchBoth, true}, {"paid", searchBoth, true}, {"order", searchValue, false},
		{"paid", searchKey, false}, {"paid", searchValue, true}, {"nothing", searchBoth, false}, {"", searchKey, true},
	}
	for _, c := range cases {
		if got := matcher(browseQuery{Search: c.search, In: c.in})(rec); got != c.want {
			t.Errorf("search %q in %s: %v, want %v", c.search, c.in, got, c.want)
		}
	}
}

func TestShowBytesNeverEmitsInvalidUTF8(t *testing.T) {
	b := []byte{'o', 'k', 0xff, 0xfe, '<', 'b', '>'}
	for _, r := range []renderAs{renderText, renderJSON} {
		sb := showBytes(b, r)
		if sb.Text != `ok\xff\xfe<b>` || !strings.Contains(sb.Note, "not UTF-8") {
			t.Errorf("%s: text %q note %q", r, sb.Text, sb.Note)
		}
	}
	if sb := showBytes(b, renderHex); !strings.Contains(sb.Text, "6f 6b ff fe 3c 62 3e") {
		t.Errorf("hex: %q", sb.Text)
	}
	if sb := showBytes([]byte(`{"a":[1,2]}`), renderJSON); sb.Text != "{\n  \"a\": [\n    1,\n    2\n  ]\n}" || sb.Note != "" {
		t.Errorf("json: %q note %q", sb.Text, sb.Note)
	}
	big := []byte(strings.Repeat("x", maxShownBytes+10))
	if sb := showBytes(big, renderText); len(sb.Text) != maxShownBytes || sb.Size != len(big) || sb.Note == "" {
		t.Errorf("a value above the cap was shown with %d bytes, note %q", len(sb.Text), sb.Note)
	}
	if sb := showBytes([]byte("a\x00b\r"), renderText); sb.Text != `a\x00b\x0d` || !strings.Contains(sb.Note, "control characters") {
		t.Errorf("control characters: text %q note %q", sb.Text, sb.Note)
	}
	if sb := showBytes(nil, renderText); !sb.Null {
		t.Error("a null value is not marked null")
	}
}

func TestNewestFirstSearchStepsBackInChunksWithinTheScanLimit(t *testing.T) {
	cases := []struct {
		limit, scan int
		want        string
		scanned     int
		stop        stopReason
		older       int64
	}{
		{5, 12_000, "[19000 18000 17000 16000 15000]", 5_000, stopResults, 15_000},
		{10, 12_000, "[19000 18000 17000 16000 15000 14000 13000 12000 11000 10000]", 10_000, stopResults, 10_000},
		{50, 12_000, "[19000 18000 17000 16000 15000 14000 13000 12000 11000 10000 9000 8000]", 12_000, stopScan, 8_000},
		{50, 100_000, "[19000 18000 17000 16000 15000 14000 13000 12000 11000 10000 9000 8000 7000 6000 5000 4000 3000 2000 1000 0]", 20_000, stopStart, -1},
	}
	for _, c := range cases {
		// Every offset holds a record; the search matches multiples of 1000.
		src := newFakeSource(20_000, nil)
		res := browseResult{Query: browseQuery{Limit: c.limit, Scan: c.scan, Search: "x"}, Bounds: partitionBounds{Start: 0, End: 20_000}, Next: 20_000, Older: -1}
		src.SeekTo(20_000 - min(newestChunk, int64(c.scan)))
		b := browser{clk: clock.Real{}}
		if err := b.stepBackWith(context.Background(), res.Query, src, newestChunk, &res, func(r *kgo.Record) bool { return r.Offset%1000 == 0 }); err != nil {
			t.Fatal(err)
		}
		var got []int64
		for _, r := range res.Records {
			got = append(got, r.Offset)
		}
		if fmt.Sprint(got) != c.want || res.Scanned != c.scanned || res.Stop != c.stop || res.Older != c.older {
			t.Errorf("limit %d scan %d: got %v scanned %d stop %q older %d; want %s, %d, %q, %d",
				c.limit, c.scan, got, res.Scanned, res.Stop, res.Older, c.want, c.scanned, c.stop, c.older)
		}
		if src.handed > c.scan {
			t.Errorf("limit %d scan %d: the source handed out %d records", c.limit, c.scan, src.handed)
		}
	}
}

func TestShowRecordRendersHeadersAsTextOrHex(t *testing.T) {
	rec := &kgo.Record{Value: []byte(`{"a":1}`), Headers: []kgo.RecordHeader{{Key: "src", Value: []byte("curl")}}}
	if h := showRecord(rec, renderJSON).Headers[0].Value; h.Text != "curl" || h.Note != "" {
		t.Errorf("json page: header %q note %q, want plain text", h.Text, h.Note)
	}
	if h := showRecord(rec, renderHex).Headers[0].Value; !strings.Contains(h.Text, "63 75 72 6c") {
		t.Errorf("hex page: header %q", h.Text)
	}
}
