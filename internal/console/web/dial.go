package web

import (
	"context"
	"crypto/tls"
	"net"
	"time"
)

// dial connects a console client to DialAddr(addr), over TLS when the
// listener is TLS, as kgo's own dialer would (10 s timeout; the server
// name is the dialed host unless the config names one).
func (c *Console) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: 10 * time.Second}
	addr = c.opts.DialAddr(addr)
	if c.opts.TLS == nil {
		return d.DialContext(ctx, network, addr)
	}
	td := &tls.Dialer{NetDialer: d, Config: c.opts.TLS.Clone()}
	return td.DialContext(ctx, network, addr)
}
