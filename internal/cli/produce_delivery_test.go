package cli

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestDeliveryTrackerOverdue(t *testing.T) {
	d := newDeliveryTracker()
	t0 := time.Unix(1000, 0)
	r1, r2, r3 := &kgo.Record{}, &kgo.Record{}, &kgo.Record{}
	d.sent(r1, t0)
	d.sent(r2, t0.Add(time.Second))
	d.sent(r3, t0.Add(2*time.Second))
	r1.Partition, r2.Partition, r3.Partition = 0, 2, 2
	for _, r := range []*kgo.Record{r1, r2, r3} {
		d.OnProduceRecordPartitioned(r, 1)
	}
	if err := d.overdue(t0.Add(4*time.Second), 5*time.Second); err != nil {
		t.Fatalf("overdue before the oldest record's deadline: %v", err)
	}
	d.done(r1, nil) // the oldest is acknowledged: r2 is now the oldest
	if err := d.overdue(t0.Add(5500*time.Millisecond), 5*time.Second); err != nil {
		t.Fatalf("overdue measured from an acknowledged record: %v", err)
	}
	d.noteBroker(1, errors.New("dial tcp 127.0.0.1:9092: connect: connection refused"))
	err := d.overdue(t0.Add(6*time.Second), 5*time.Second)
	if want := "2 records not delivered to partition 2 within 5s: dial tcp 127.0.0.1:9092: connect: connection refused"; err == nil || err.Error() != want {
		t.Fatalf("overdue = %v, want %q", err, want)
	}
	// A partition's own error from its leader explains more than a broker's.
	d.notePartition(2, serverError(kerr.NotEnoughReplicas, "1 in sync, 2 needed"))
	if err := d.notDelivered(5 * time.Second); !strings.Contains(err.Error(), "NOT_ENOUGH_REPLICAS") {
		t.Fatalf("notDelivered = %v, want the partition's error", err)
	}
	// Records kgo failed count as not delivered too, and a broker that
	// answers again is no longer the cause.
	d.done(r2, kgo.ErrRecordTimeout)
	d.notePartition(2, nil)
	d.noteBroker(1, nil)
	err = d.notDelivered(5 * time.Second)
	if want := "2 records not delivered to partition 2 within 5s: no acknowledgement from the partition leader"; err.Error() != want {
		t.Fatalf("notDelivered = %q, want %q", err, want)
	}
}

func TestFrameReaderFollowsPieces(t *testing.T) {
	frame := func(body string) string {
		n := len(body)
		return string([]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}) + body
	}
	stream := frame("first-frame") + frame("") + frame("second")
	var got []string
	f := frameReader{keep: maxSniffedResponse}
	for i := 0; i < len(stream); i += 3 { // three bytes at a time
		f.feed([]byte(stream[i:min(i+3, len(stream))]), func(b []byte) { got = append(got, string(b)) })
	}
	if strings.Join(got, ",") != "first-frame,second" {
		t.Fatalf("frames %q", got)
	}
	short := frameReader{keep: 4}
	got = nil
	short.feed([]byte(stream), func(b []byte) { got = append(got, string(b)) })
	if strings.Join(got, ",") != "firs,seco" {
		t.Fatalf("first bytes of the frames %q", got)
	}
}
