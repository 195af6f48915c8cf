package controller

import (
	"fmt"
	"maps"
	"slices"

	"github.com/sluice-io/sluice/internal/metadata"
)

// partitionLimit holds a request's new partitions to
// Options.MaxPartitionsPerBroker: the partition replicas each broker would
// host once the topics accepted so far are created. Each partition holds at
// least one open file on its brokers (its active segment), so a request
// that would take a broker past its open file limit is refused up front
// with POLICY_VIOLATION, instead of the broker failing later with
// KAFKA_STORAGE_ERROR (or its listener with EMFILE).
type partitionLimit struct {
	max  int
	im   *metadata.Image
	load map[int32]int // replicas per broker; nil until first needed
}

func (c *Controller) partitionLimit(im *metadata.Image) *partitionLimit {
	return &partitionLimit{max: c.opts.MaxPartitionsPerBroker, im: im}
}

// admit counts the partitions recs add to their brokers, or returns the
// refusal's message, naming the broker, the count and the limit, when one
// would pass it (nothing is counted then).
func (p *partitionLimit) admit(recs []metadata.Record) (string, bool) {
	if p.max <= 0 {
		return "", true
	}
	if p.load == nil {
		p.load = replicasPerBroker(p.im)
	}
	adding := map[int32]int{}
	for _, r := range recs {
		if pr, ok := r.(*metadata.PartitionRecord); ok {
			for _, b := range pr.Replicas {
				adding[b]++
			}
		}
	}
	for _, b := range slices.Sorted(maps.Keys(adding)) {
		if n := p.load[b] + adding[b]; n > p.max {
			return fmt.Sprintf("the request would place %d partitions on broker %d, which hosts %d: %d is past its limit of %d "+
				"(each partition holds at least one open file, and the limit is the broker's open file limit, RLIMIT_NOFILE, "+
				"less room kept for connections)", adding[b], b, p.load[b], n, p.max), false
		}
	}
	for b, n := range adding {
		p.load[b] += n
	}
	return "", true
}

// replicasPerBroker counts the partition replicas each broker hosts.
func replicasPerBroker(im *metadata.Image) map[int32]int {
	load := map[int32]int{}
	for _, name := range im.TopicNames() {
		t, _ := im.Topic(name)
		for _, st := range t.Partitions {
			for _, b := range st.Replicas {
				load[b]++
			}
		}
	}
	return load
}
