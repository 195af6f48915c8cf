package server

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/api"
	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/protocol"
)

// requestTiming is the request in flight's timestamps, Kafka's
// RequestChannel.Request times, set by the connection's goroutine.
type requestTiming struct {
	clk clock.Clock
	// arrived: the request's last byte read; started: its handler called;
	// handled: the handler returned; dequeued: the response's write
	// began; sent: its last byte written.
	arrived, started, handled, dequeued, sent time.Time
	// remote is the time the handler spent parked (purgatory.ParkedTime).
	remote    time.Duration
	apiKey    int16
	version   int16
	served    bool
	follower  bool
	bodyBytes int
}

// HandlerStarting implements api.ServeObserver.
func (t *requestTiming) HandlerStarting(req *api.Request) {
	t.started = t.clk.Now()
	if f, ok := req.Body.(*kmsg.FetchRequest); ok {
		t.follower = fetchFromFollower(f)
	}
}

// begin starts timing a request whose frame was just read.
func (t *requestTiming) begin() {
	*t = requestTiming{clk: t.clk, arrived: t.clk.Now()}
}

// versionServed reports whether h's version is one the registry serves:
// only an ApiVersions request (answered per KIP-511) can get this far with
// another, so only it pays for the look-up.
func (c *conn) versionServed(h protocol.RequestHeader) bool {
	if h.APIKey != protocol.ApiVersionsKey {
		return true
	}
	v, ok := c.registry.Supported(h.APIKey)
	return ok && h.APIVersion >= v.Min && h.APIVersion <= v.Max
}
