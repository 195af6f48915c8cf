package hostile

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// TestCreateTopicsOfTenThousandPartitionsRefused sends, from a real client
// to a real server, one CreateTopics of 10,000 partitions: a topic record
// and 10,000 partition records, past the 10,000 metadata records one
// request may make. Kafka 4.4.0 answers POLICY_VIOLATION and creates
// nothing (bench/compare's partitions phase met it there); so must Sluice.
// Creating the topic in two requests is the partitions phase's (not here:
// 10,000 logs take a minute on a loaded 2-core machine).
func TestCreateTopicsOfTenThousandPartitionsRefused(t *testing.T) {
	n := startDiskNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	adm := kadm.NewClient(n.client())
	res, err := adm.CreateTopic(ctx, 10000, 1, nil, "ten")
	if !errors.Is(err, kerr.PolicyViolation) && !errors.Is(res.Err, kerr.PolicyViolation) {
		t.Fatalf("CreateTopics of 10,000 partitions: %v %+v, want POLICY_VIOLATION", err, res)
	}
	if !strings.Contains(res.ErrMessage, "10000 metadata records") {
		t.Fatalf("refusal message %q does not say what the limit is", res.ErrMessage)
	}
	if topics, err := adm.ListTopics(ctx, "ten"); err != nil || topics.Has("ten") {
		t.Fatalf("the refused topic exists: %v %v", topics, err)
	}
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "ten"); err != nil {
		t.Fatalf("the same name with 1 partition after the refusal: %v", err)
	}
}
