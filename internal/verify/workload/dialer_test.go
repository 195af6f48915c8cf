package workload

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"
)

func TestCutDialerClosesAndRefuses(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	cfg := Config{Brokers: []string{ln.Addr().String()}, Topic: "t"}
	_, d, err := cuttableOpts(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn, err := d.dial(ctx, "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	d.Cut()
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
		t.Errorf("read on a cut connection: %v, want %v", err, net.ErrClosed)
	}
	if _, err := d.dial(ctx, "tcp", ln.Addr().String()); !errors.Is(err, errCut) {
		t.Errorf("dial after the cut: %v, want %v", err, errCut)
	}
}
