package node

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-io/sluice/internal/version"
)

// registerBuildInfo puts sluice_build_info on the node's registry: one
// series, always 1, whose labels say what runs (the Prometheus convention
// for build information; Kafka's kafka.server:type=app-info carries the
// same as string attributes, which the JMX exporter does not export). A
// collision (a node built again on one registry, in tests) is logged.
func (n *Node) registerBuildInfo() {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "sluice_build_info",
		Help: "Always 1; the labels name the Sluice version and git revision this node runs and the Go release it was built with.",
		ConstLabels: prometheus.Labels{
			"version":   version.Version(),
			"revision":  version.Revision(),
			"goversion": version.GoVersion(),
		},
	})
	g.Set(1)
	if err := n.metrics.Register(g); err != nil {
		n.logger.Warn("build info metric not registered", "err", err)
	}
}
