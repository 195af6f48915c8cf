package commitlog

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// managerMetrics are the Manager's Prometheus series, registered on the
// node's registry.
type managerMetrics struct {
	// corruptBatches counts damaged batches found in segments, each once.
	corruptBatches *prometheus.CounterVec
}

func newManagerMetrics(reg prometheus.Registerer) (*managerMetrics, error) {
	m := &managerMetrics{
		corruptBatches: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sluice_log_corrupt_batches_total",
			Help: "Damaged record batches found in log segments by reads, each place counted once."}, []string{"topic", "partition"}),
	}
	if reg == nil {
		return m, nil
	}
	if err := reg.Register(m.corruptBatches); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *managerMetrics) corruptBatch(l *Log) {
	m.corruptBatches.WithLabelValues(l.tp.Topic, strconv.Itoa(int(l.tp.Partition))).Inc()
}
