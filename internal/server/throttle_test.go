package server

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/api"
	"github.com/sluice-io/sluice/internal/clock"
)

// TestThrottledConnectionIsMuted: a throttled response is written at once,
// and the connection's next request is read only once the throttle time
// has passed on the server's clock (KIP-219).
func TestThrottledConnectionIsMuted(t *testing.T) {
	clk := clock.NewManual(time.Unix(1000, 0))
	var handled atomic.Int32
	ts := startServer(t, func(o *Options) { o.Clock = clk }, metadataHandler(func(_ context.Context, req *api.Request) api.Response {
		handled.Add(1)
		resp := api.Reply(req.Body.ResponseKind())
		if req.Header.CorrelationID == 1 {
			return resp.WithThrottle(500)
		}
		return resp
	}))
	c := dial(t, ts.addr)
	send(t, c, kmsg.NewPtrMetadataRequest(), 4, 1)
	send(t, c, kmsg.NewPtrMetadataRequest(), 4, 2)
	if corr, _ := readResponse(t, c, false); corr != 1 {
		t.Fatalf("first answer has correlation %d", corr)
	}
	// The reader waits on the throttle timer with the second request in
	// the socket: not read, not handled.
	clk.BlockUntil(1)
	if n := handled.Load(); n != 1 {
		t.Fatalf("%d requests handled while muted", n)
	}
	clk.Advance(499 * time.Millisecond)
	if n := handled.Load(); n != 1 {
		t.Fatalf("%d requests handled 1 ms before the mute ends", n)
	}
	clk.Advance(time.Millisecond)
	if corr, _ := readResponse(t, c, false); corr != 2 {
		t.Fatalf("second answer has correlation %d", corr)
	}
}

// TestShutdownEndsMute: draining does not wait out a throttle.
func TestShutdownEndsMute(t *testing.T) {
	clk := clock.NewManual(time.Unix(1000, 0))
	ts := startServer(t, func(o *Options) { o.Clock = clk }, metadataHandler(func(_ context.Context, req *api.Request) api.Response {
		return api.Reply(req.Body.ResponseKind()).WithThrottle(int64(time.Hour / time.Millisecond))
	}))
	c := dial(t, ts.addr)
	send(t, c, kmsg.NewPtrMetadataRequest(), 4, 1)
	readResponse(t, c, false)
	clk.BlockUntil(1)
	if err := shutdownNow(ts.srv); err != nil {
		t.Fatalf("shutdown with a muted connection: %v", err)
	}
	expectClosed(t, c)
}
