package server

import (
	"time"

	"github.com/sluice-io/sluice/internal/api"
	"github.com/sluice-io/sluice/internal/clock"
)

// KIP-219's muting: a response a client quota throttled goes out at once,
// carrying throttle_time_ms, and the connection's next request is read
// only once that time has passed (Kafka's SocketServer keeps the channel
// muted until its ThrottledChannel expires). The reader goroutine serves
// one request at a time, so not reading is the mute; the kernel's buffers
// hold what the client sends meanwhile.

// noteThrottle remembers until when the connection is muted.
func (c *conn) noteThrottle(resp api.Response) {
	if ms := resp.ThrottleMs(); ms > 0 {
		c.throttledUntil = c.srv.clock.Now().Add(time.Duration(ms) * time.Millisecond)
	}
}

// waitThrottle waits out the mute; draining or closing cuts it short.
func (c *conn) waitThrottle() {
	if c.throttledUntil.IsZero() {
		return
	}
	d := clock.Until(c.srv.clock, c.throttledUntil)
	c.throttledUntil = time.Time{}
	if d <= 0 {
		return
	}
	t := c.srv.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
	case <-c.ctx.Done():
	}
}
