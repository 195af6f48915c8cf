package quota

import (
	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/metadata"
)

// Options configure a broker's quota managers.
type Options struct {
	// Config is quota.window.num and quota.window.size.seconds (the
	// produce, fetch and request quotas).
	Config Config
	// ControllerConfig is controller.quota.window.num and
	// controller.quota.window.size.seconds (the controller mutation quota).
	ControllerConfig Config
	// Clock is the time quotas measure with; nil is the real clock.
	Clock clock.Clock
	// Images returns the latest published metadata image (nil: none); the
	// quotas in force are its client quota records, read again whenever
	// it returns another image.
	Images func() *metadata.Image
}

// Managers are Kafka's QuotaManagers: one manager per kind.
type Managers struct {
	Produce            *Manager
	Fetch              *Manager
	Request            *Manager
	ControllerMutation *Manager
}

// New builds the managers.
func New(opts Options) *Managers {
	clk := opts.Clock
	if clk == nil {
		clk = clock.Real{}
	}
	return &Managers{
		Produce:            newManager(Produce, opts.Config, clk, opts.Images),
		Fetch:              newManager(Fetch, opts.Config, clk, opts.Images),
		Request:            newManager(Request, opts.Config, clk, opts.Images),
		ControllerMutation: newManager(ControllerMutation, opts.ControllerConfig, clk, opts.Images),
	}
}

// Clock is the clock the quotas measure with.
func (m *Managers) Clock() clock.Clock { return m.Produce.clock }

func (m *Managers) all() []*Manager {
	return []*Manager{m.Produce, m.Fetch, m.Request, m.ControllerMutation}
}

// NanosToPercentage is ClientRequestQuotaManager's conversion of request
// time to the request_percentage unit (percent of one thread per second).
func NanosToPercentage(nanos int64) float64 { return float64(nanos) * 100 / 1e9 }
