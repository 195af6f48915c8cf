package main

import (
	"context"
	"fmt"
)

// clusterProduceSpecs are the produce rows issue 10 asks for on a cluster: the Java
// producer's default (acks=all, idempotent) on 1 and 16 partitions, replicated to every node.
func clusterProduceSpecs(nodes int) []produceSpec {
	return []produceSpec{
		{AcksAll: true, Partitions: 1, Nodes: nodes},
		{AcksAll: true, Partitions: 16, Nodes: nodes},
	}
}

func clusterRSSProduceRow(nodes int) row {
	return row{Key: "rss-produce" + nodesKey(nodes), Label: fmt.Sprintf("Peak RSS (VmHWM) summed over the %d nodes after the two produce runs", nodes), Unit: "MiB", Format: "%.0f"}
}

func clusterRSSCatchUpRow(nodes int) row {
	return row{Key: "rss-catchup" + nodesKey(nodes), Label: fmt.Sprintf("Peak RSS (VmHWM) summed over the %d nodes after fill and catch-up read", nodes), Unit: "MiB", Format: "%.0f"}
}

func (s *suite) newCluster(sys system, nodes int) (target, error) {
	if sys == sysSluice {
		return newSluiceCluster(s.sluiceBin, s.scratch, nodes)
	}
	return newKafkaCluster(s.kafkaRef, s.scratch, nodes)
}

// clusterSession starts a fresh cluster of the given size, runs fn against it, and always
// closes it.
func (s *suite) clusterSession(ctx context.Context, sys system, nodes, round int, phase string, fn func(target) error) {
	c, err := s.newCluster(sys, nodes)
	if err != nil {
		s.res.note("round %d %s %s on %d nodes: %v", round, sys, phase, nodes, err)
		return
	}
	s.runSession(ctx, c, round, phase+fmt.Sprintf(" on %d nodes", nodes), fn)
}

// clusterProduceSession: the cluster's produce runs, then peak RSS summed over the nodes.
func (s *suite) clusterProduceSession(ctx context.Context, sys system, nodes, round int) {
	s.clusterSession(ctx, sys, nodes, round, "produce", func(b target) error {
		s.produceRuns(ctx, b, sys, round, clusterProduceSpecs(nodes))
		return s.recordRSS(b, clusterRSSProduceRow(nodes), sys, round)
	})
}

// clusterCatchUpSession: the fill (acks=1, replicated to every node) and the catch-up read
// from the cluster, then peak RSS summed over the nodes. Restarts and the fixed-rate run
// are single-broker rows only.
func (s *suite) clusterCatchUpSession(ctx context.Context, sys system, nodes, round int) {
	s.clusterSession(ctx, sys, nodes, round, "catch-up", func(b target) error {
		if err := s.fillAndRead(ctx, b, sys, round); err != nil {
			return err
		}
		return s.recordRSS(b, clusterRSSCatchUpRow(nodes), sys, round)
	})
}
