package quorumctl

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-io/sluice/internal/controller"
	"github.com/sluice-io/sluice/internal/metadata"
)

// The kafka.controller:type=KafkaController gauges, as the JMX exporter
// names them. Kafka registers them on every controller (QuorumController-
// Metrics and ControllerMetadataMetrics); a standby reports the image it
// has applied and an ActiveControllerCount of 0.
var (
	activeControllerDesc = kafkaControllerDesc("activecontrollercount", "1 on the active controller (the quorum leader), 0 on the other controllers.")
	fencedBrokersDesc    = kafkaControllerDesc("fencedbrokercount", "Fenced brokers in this controller's metadata image.")
	activeBrokersDesc    = kafkaControllerDesc("activebrokercount", "Registered, unfenced brokers in this controller's metadata image.")
	topicsDesc           = kafkaControllerDesc("globaltopiccount", "Topics in this controller's metadata image, internal ones included.")
	partitionsDesc       = kafkaControllerDesc("globalpartitioncount", "Partitions in this controller's metadata image, internal ones included.")
	offlineDesc          = kafkaControllerDesc("offlinepartitionscount", "Partitions with no leader.")
	imbalanceDesc        = kafkaControllerDesc("preferredreplicaimbalancecount", "Partitions whose leader is not their preferred (first) replica.")
	metadataErrorsDesc   = kafkaControllerDesc("metadataerrorcount", "Errors met while applying the metadata log; always 0 on a running node, since such an error stops it.")
)

func kafkaControllerDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc("kafka_controller_kafkacontroller_"+name, help, nil, nil)
}

// metricsCollector computes the gauges when scraped, from the quorum's
// status and the applied image.
type metricsCollector struct {
	active func() bool
	image  func() *metadata.Image
}

// NewMetricsCollector returns the KafkaController gauges of a controller
// whose leadership active reports and whose applied image image returns.
func NewMetricsCollector(active func() bool, image func() *metadata.Image) prometheus.Collector {
	return metricsCollector{active: active, image: image}
}

// MetricsCollector is the KafkaController gauges of this voter.
func (c *QuorumController) MetricsCollector() prometheus.Collector {
	return NewMetricsCollector(c.Active, c.opts.Image)
}

func (metricsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{activeControllerDesc, fencedBrokersDesc, activeBrokersDesc, topicsDesc,
		partitionsDesc, offlineDesc, imbalanceDesc, metadataErrorsDesc} {
		ch <- d
	}
}

func (m metricsCollector) Collect(ch chan<- prometheus.Metric) {
	active := 0.0
	if m.active() {
		active = 1
	}
	im := controller.MeasureImage(m.image())
	for _, g := range []struct {
		desc *prometheus.Desc
		v    float64
	}{
		{activeControllerDesc, active},
		{fencedBrokersDesc, float64(im.FencedBrokers)},
		{activeBrokersDesc, float64(im.ActiveBrokers)},
		{topicsDesc, float64(im.Topics)},
		{partitionsDesc, float64(im.Partitions)},
		{offlineDesc, float64(im.Offline)},
		{imbalanceDesc, float64(im.NotPreferred)},
		{metadataErrorsDesc, 0},
	} {
		ch <- prometheus.MustNewConstMetric(g.desc, prometheus.GaugeValue, g.v)
	}
}
