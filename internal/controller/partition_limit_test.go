package controller

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
)

// limitCluster is an image of brokers 1 and 2, unfenced, and a controller
// allowing max partition replicas per broker.
type limitCluster struct {
	t   *testing.T
	c   *Controller
	im  *metadata.Image
	off int64
}

func newLimitCluster(t *testing.T, max int) *limitCluster {
	n := 0
	lc := &limitCluster{t: t, im: metadata.EmptyImage(), c: New(Options{Configs: testPolicy{}, MaxPartitionsPerBroker: max,
		NewTopicID: func() (kafka.UUID, error) { n++; return testID(n), nil }})}
	lc.apply(metadata.BootstrapRecords("c", 1))
	for id := int32(1); id <= 2; id++ {
		req := kmsg.NewPtrBrokerRegistrationRequest()
		req.BrokerID, req.ClusterID, req.IncarnationID = id, "c", testID(100+int(id))
		recs, resp := lc.c.RegisterBroker(lc.im, req)
		if resp.ErrorCode != 0 {
			t.Fatalf("register %d: %s", id, errName(resp.ErrorCode))
		}
		lc.apply(recs)
		b, _ := lc.im.Broker(id)
		recs, err := lc.c.UnfenceBroker(lc.im, id, b.Epoch)
		if err != nil {
			t.Fatal(err)
		}
		lc.apply(recs)
	}
	return lc
}

func (lc *limitCluster) apply(recs []metadata.Record) {
	d := metadata.NewDelta(lc.im)
	for _, r := range recs {
		if err := d.Replay(lc.off, 1, r); err != nil {
			lc.t.Fatal(err)
		}
	}
	lc.off++
	lc.im = d.Apply()
}

// create asks for one topic and returns its error code and message.
func (lc *limitCluster) create(name string, partitions int32, rf int16, validateOnly bool) (int16, string) {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.ValidateOnly = validateOnly
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, partitions, rf
	req.Topics = append(req.Topics, rt)
	recs, resp := lc.c.CreateTopics(lc.im, req)
	lc.apply(recs)
	return resp.Topics[0].ErrorCode, msgOf(resp.Topics[0].ErrorMessage)
}

// TestCreateTopicsPastPartitionLimitRefused fills brokers 1 and 2 up to a
// limit of 10 partition replicas each: requests that fit are created, one
// that would pass the limit on a broker is refused with POLICY_VIOLATION
// naming the broker, the count and the limit (validate_only too, and for
// CreatePartitions), and creates nothing.
func TestCreateTopicsPastPartitionLimitRefused(t *testing.T) {
	lc := newLimitCluster(t, 10)
	if code, msg := lc.create("a", 6, 2, false); code != 0 {
		t.Fatalf("6 partitions at RF 2 on 2 brokers of 10: %s %s", errName(code), msg)
	}
	code, msg := lc.create("b", 5, 2, true)
	if code != kerr.PolicyViolation.Code || !strings.Contains(msg, "11 is past its limit of 10") || !strings.Contains(msg, "broker 1") {
		t.Fatalf("validate-only past the limit: %s %q", errName(code), msg)
	}
	if code, msg := lc.create("b", 5, 2, false); code != kerr.PolicyViolation.Code || !strings.Contains(msg, "RLIMIT_NOFILE") {
		t.Fatalf("past the limit: %s %q", errName(code), msg)
	}
	if _, ok := lc.im.Topic("b"); ok {
		t.Fatal("a refused topic was created")
	}
	if code, msg := lc.create("c", 8, 1, false); code != 0 {
		t.Fatalf("8 partitions at RF 1 (4 a broker) next to 6 each: %s %s", errName(code), msg)
	}
	req := kmsg.NewPtrCreatePartitionsRequest()
	req.Topics = append(req.Topics, kmsg.CreatePartitionsRequestTopic{Topic: "c", Count: 9})
	recs, resp := lc.c.CreatePartitions(lc.im, req)
	if resp.Topics[0].ErrorCode != kerr.PolicyViolation.Code || len(recs) != 0 {
		t.Fatalf("CreatePartitions past the limit: %s %q, %d records", errName(resp.Topics[0].ErrorCode), msgOf(resp.Topics[0].ErrorMessage), len(recs))
	}
	unlimited := newLimitCluster(t, 0)
	if code, msg := unlimited.create("big", 1000, 2, false); code != 0 {
		t.Fatalf("no limit: %s %s", errName(code), msg)
	}
}
