package api

import (
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// dtpSummary renders a response as "topic:err:first-last ... next=topic/p".
func dtpSummary(resp *kmsg.DescribeTopicPartitionsResponse) string {
	var b strings.Builder
	for _, t := range resp.Topics {
		fmt.Fprintf(&b, "%s:%d", *t.Topic, t.ErrorCode)
		if n := len(t.Partitions); n > 0 {
			fmt.Fprintf(&b, ":%d-%d", t.Partitions[0].Partition, t.Partitions[n-1].Partition)
		}
		b.WriteString(" ")
	}
	if c := resp.NextCursor; c != nil {
		fmt.Fprintf(&b, "next=%s/%d", c.Topic, c.Partition)
	}
	return strings.TrimSpace(b.String())
}

func TestDescribeTopicPartitionsPaging(t *testing.T) {
	im := quotaImage(t, nil, map[string]int{"a": 5, "b": 3, "c": 2})
	allow := dtpAuth{describe: allowAll, ops: func(string) int32 { return allTopicOperations }}
	denyB := dtpAuth{describe: func(n string) bool { return n != "b" }, ops: allow.ops}
	cases := []struct {
		topics     []string
		cursor     *kmsg.DescribeTopicPartitionsRequestCursor
		limit, max int32
		az         dtpAuth
		want       string
	}{
		{nil, nil, 2000, 2000, allow, "a:0:0-4 b:0:0-2 c:0:0-1"},
		{nil, nil, 4, 2000, allow, "a:0:0-3 next=a/4"},
		// The limit ends exactly at a topic's end: the cursor names the next.
		{nil, nil, 5, 2000, allow, "a:0:0-4 next=b/0"},
		{nil, nil, 6, 2000, allow, "a:0:0-4 b:0:0-0 next=b/1"},
		{nil, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "b", Partition: 1}, 3, 2000, allow, "b:0:1-2 c:0:0-0 next=c/1"},
		// The broker's max.request.partition.size.limit caps the request's.
		{nil, nil, 2000, 3, allow, "a:0:0-2 next=a/3"},
		// A limit below 1 is 1.
		{nil, nil, 0, 2000, allow, "a:0:0-0 next=a/1"},
		{[]string{"c", "a", "zz", "a"}, nil, 2000, 2000, allow, "a:0:0-4 c:0:0-1 zz:3"},
		{[]string{"bad name"}, nil, 2000, 2000, allow, "bad name:17"},
		{nil, nil, 2000, 2000, denyB, "a:0:0-4 c:0:0-1"},
		{[]string{"b", "c"}, nil, 2000, 2000, denyB, "c:0:0-1 b:29"},
		{[]string{"a", "c"}, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "b"}, 2000, 2000, allow, "a:42 c:42"},
		{nil, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "a", Partition: -1}, 2000, 2000, allow, ""},
	}
	for i, c := range cases {
		req := kmsg.NewPtrDescribeTopicPartitionsRequest()
		for _, n := range c.topics {
			rt := kmsg.NewDescribeTopicPartitionsRequestTopic()
			rt.Topic = n
			req.Topics = append(req.Topics, rt)
		}
		req.Cursor, req.ResponsePartitionLimit = c.cursor, c.limit
		got := dtpSummary(describeTopicPartitions(im, "PLAINTEXT", req, c.max, c.az))
		if got != c.want {
			t.Errorf("case %d: got %q, want %q", i, got, c.want)
		}
	}
}

func TestDescribeTopicPartitionsFields(t *testing.T) {
	im := quotaImage(t, nil, map[string]int{"a": 1})
	req := kmsg.NewPtrDescribeTopicPartitionsRequest()
	resp := describeTopicPartitions(im, "PLAINTEXT", req, 2000, dtpAuth{describe: allowAll, ops: func(string) int32 { return 7 }})
	p := resp.Topics[0].Partitions[0]
	// Broker 1 is not registered: no leader, an offline replica, ELR empty
	// (not null), as Kafka reports a partition without ELR.
	if p.LeaderID != -1 || len(p.OfflineReplicas) != 1 || p.EligibleLeaderReplicas == nil || p.LastKnownELR == nil ||
		resp.Topics[0].AuthorizedOperations != 7 {
		t.Fatalf("partition %+v, topic ops %d", p, resp.Topics[0].AuthorizedOperations)
	}
}
