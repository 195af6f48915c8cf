package web

import (
	"context"
	"fmt"
	"net/http"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// reassignment is one partition being moved.
type reassignment struct {
	Topic                      string
	Partition                  int32
	Replicas, Adding, Removing []int32
}

// listReassignments asks the controller for every reassignment in
// progress (ListPartitionReassignments with null topics: all of them;
// kadm only lists named topics).
func listReassignments(ctx context.Context, cl *kgo.Client) ([]reassignment, error) {
	req := kmsg.NewPtrListPartitionReassignmentsRequest()
	req.TimeoutMillis = 10_000
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("listing partition reassignments: %w", err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, fmt.Errorf("listing partition reassignments: %w", kafkaErr(err, deref(resp.ErrorMessage)))
	}
	var out []reassignment
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			out = append(out, reassignment{Topic: t.Topic, Partition: p.Partition, Replicas: p.Replicas, Adding: p.AddingReplicas, Removing: p.RemovingReplicas})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Topic < out[j].Topic || out[i].Topic == out[j].Topic && out[i].Partition < out[j].Partition
	})
	return out, nil
}

func (c *Console) reassignmentsPage(w http.ResponseWriter, r *http.Request, s *session) error {
	rs, err := listReassignments(r.Context(), s.Client())
	if err != nil {
		return err
	}
	c.render(w, s, http.StatusOK, "reassignments.html", "Reassignments in progress", rs)
	return nil
}
