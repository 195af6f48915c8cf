package workload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/verify/history"
)

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		err  error
		want history.Kind
	}{
		{nil, history.Ack},
		{kerr.MessageTooLarge, history.Fail},
		{kerr.TopicAuthorizationFailed, history.Fail},
		{kgo.ErrMaxBuffered, history.Fail},
		{fmt.Errorf("producing: %w", kerr.InvalidRecord), history.Fail},
		// A timeout wraps the last attempt's error; earlier ones may have landed.
		{fmt.Errorf("%w, last err: %w", kgo.ErrRecordTimeout, kerr.NotEnoughReplicas), history.Info},
		{fmt.Errorf("%w, last err: %w", kgo.ErrRecordRetries, kerr.MessageTooLarge), history.Info},
		{kgo.ErrRecordTimeout, history.Info},
		{kerr.NotEnoughReplicasAfterAppend, history.Info},
		{kerr.RequestTimedOut, history.Info},
		{kerr.OutOfOrderSequenceNumber, history.Info},
		{kerr.DuplicateSequenceNumber, history.Info},
		{kgo.ErrClientClosed, history.Info},
		{context.Canceled, history.Info},
		{context.DeadlineExceeded, history.Info},
		{io.EOF, history.Info},
		{&net.OpError{Op: "read", Err: errors.New("connection reset by peer")}, history.Info},
	} {
		if got := Classify(c.err); got != c.want {
			t.Errorf("Classify(%v) = %s, want %s", c.err, got, c.want)
		}
	}
}

// A batch the broker refuses (larger than the topic's max.message.bytes)
// ends its sends in Fail with the broker's error.
func TestProducerRecordsRefusalAsFail(t *testing.T) {
	c := startCluster(t, 1)
	cfg := testConfig(c, t, "refused")
	cl, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tiny := "10"
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, map[string]*string{"max.message.bytes": &tiny}, cfg.Topic); err != nil {
		t.Fatal(err)
	}
	cfg.Partitions = 1
	if err := CreateTopic(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	rec := history.NewRecorder(time.Now, nil)
	p, err := NewProducer(cfg, "producer-1", rec)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		p.Send(0)
	}
	p.Drain(10 * time.Second)
	s := summarize(t, rec.Ops())
	checkSendsEnd(t, s)
	for v, outs := range s.outcomes {
		if o := outs[0]; o.Kind != history.Fail || !strings.Contains(o.Err, "MESSAGE_TOO_LARGE") {
			t.Errorf("send of %s: %s %q, want fail with MESSAGE_TOO_LARGE", v, o.Kind, o.Err)
		}
	}
	if len(s.outcomes) != 3 {
		t.Errorf("%d outcomes for 3 sends", len(s.outcomes))
	}
}
