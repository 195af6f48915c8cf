package controller

import "github.com/sluice-io/sluice/internal/metadata"

// ImageMetrics are the gauges Kafka's ControllerMetadataMetrics derives from
// the metadata image (kafka.controller:type=KafkaController). Kafka keeps
// them up to date from each delta; Sluice counts them when scraped, which
// costs one pass over the partitions.
type ImageMetrics struct {
	FencedBrokers int
	ActiveBrokers int
	Topics        int
	Partitions    int
	Offline       int // partitions without a leader
	NotPreferred  int // partitions led by another than their first replica
}

// MeasureImage counts the image's brokers and partitions as Kafka's
// ControllerMetricsChanges does: a partition is offline when it has no
// leader and imbalanced when its leader is not its first replica (so an
// offline partition is imbalanced too), internal topics included.
func MeasureImage(im *metadata.Image) ImageMetrics {
	var m ImageMetrics
	for _, id := range im.BrokerIDs() {
		b, _ := im.Broker(id)
		if b.Fenced {
			m.FencedBrokers++
		} else {
			m.ActiveBrokers++
		}
	}
	for _, name := range im.TopicNames() {
		t, _ := im.Topic(name)
		m.Topics++
		for _, p := range t.Partitions {
			m.Partitions++
			if p.Leader < 0 {
				m.Offline++
			}
			if len(p.Replicas) == 0 || p.Replicas[0] != p.Leader {
				m.NotPreferred++
			}
		}
	}
	return m
}
