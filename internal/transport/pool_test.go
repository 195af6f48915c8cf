package transport

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestPoolClosedRefusesRequests(t *testing.T) {
	p := NewPool("test")
	p.Close()
	_, err := p.Request(context.Background(), "127.0.0.1:1", kmsg.NewPtrMetadataRequest())
	if !errors.Is(err, ErrClosed) {
		t.Fatalf("request on a closed pool: %v, want ErrClosed", err)
	}
}

// A failed request leaves the caller's version as it set it, so the same
// request can go to another peer.
func TestPoolRequestKeepsCallerVersion(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens: the dial fails
	p := NewPool("test")
	defer p.Close()
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(3)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := p.Request(ctx, addr, req); err == nil {
		t.Fatal("request to a closed port succeeded")
	}
	if req.GetVersion() != 3 {
		t.Fatalf("version %d after the request, want 3", req.GetVersion())
	}
}
