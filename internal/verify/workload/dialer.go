package workload

import (
	"context"
	"errors"
	"net"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// errCut is what a killed client's dials get.
var errCut = errors.New("workload: connections cut (member killed)")

type dialFunc = func(ctx context.Context, network, host string) (net.Conn, error)

// cutDialer wraps a client's dialer so its connections can be cut and new
// ones refused: the client vanishes from the brokers' view as a killed
// process does, without a LeaveGroup, and the coordinator times its
// session out.
type cutDialer struct {
	base dialFunc

	mu sync.Mutex
	// Invariant: once cut is set, conns is empty and stays so.
	cut   bool
	conns map[net.Conn]struct{}
}

// cuttableOpts returns opts with a cutDialer in place of the dialer they
// configure (kgo's default, a TLS one from DialTLSConfig, or a Dialer),
// so TLS and custom dialers in cfg.ClientOpts keep working.
func cuttableOpts(cfg Config, opts []kgo.Opt) ([]kgo.Opt, *cutDialer, error) {
	// A client that is never used resolves the effective dialer: kgo
	// builds it from DialTLSConfig and DialTimeout in NewClient.
	probe, err := NewClient(cfg, opts...)
	if err != nil {
		return nil, nil, err
	}
	base, _ := probe.OptValue(kgo.Dialer).(dialFunc)
	probe.Close()
	if base == nil {
		base = (&net.Dialer{}).DialContext
	}
	d := &cutDialer{base: base, conns: make(map[net.Conn]struct{})}
	out := append(append([]kgo.Opt(nil), opts...), kgo.DialTLSConfig(nil), kgo.Dialer(d.dial))
	return out, d, nil
}

func (d *cutDialer) dial(ctx context.Context, network, host string) (net.Conn, error) {
	if d.isCut() {
		return nil, errCut
	}
	c, err := d.base(ctx, network, host)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cut {
		c.Close()
		return nil, errCut
	}
	tc := &trackedConn{Conn: c, d: d}
	d.conns[tc] = struct{}{}
	return tc, nil
}

func (d *cutDialer) isCut() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cut
}

// Cut closes every connection and refuses new ones.
func (d *cutDialer) Cut() {
	d.mu.Lock()
	d.cut = true
	conns := d.conns
	d.conns = map[net.Conn]struct{}{}
	d.mu.Unlock()
	for c := range conns {
		c.(*trackedConn).Conn.Close()
	}
}

type trackedConn struct {
	net.Conn
	d *cutDialer
}

func (c *trackedConn) Close() error {
	c.d.mu.Lock()
	delete(c.d.conns, c)
	c.d.mu.Unlock()
	return c.Conn.Close()
}
