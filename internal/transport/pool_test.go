package transport

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
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

// PeerOpts gives each peer address's client its own options: here a
// dialer that records the addresses it was asked to reach.
func TestPoolPeerOptions(t *testing.T) {
	dialed := make(chan string, 4)
	p := New(Options{ClientID: "test", PeerOpts: func(addr string) []kgo.Opt {
		if addr != "127.0.0.1:1" {
			return nil
		}
		return []kgo.Opt{kgo.Dialer(func(ctx context.Context, network, host string) (net.Conn, error) {
			dialed <- host
			return nil, errors.New("refused by the test dialer")
		})}
	}})
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := p.Request(ctx, "127.0.0.1:1", kmsg.NewPtrMetadataRequest()); err == nil {
		t.Fatal("request through a refusing dialer succeeded")
	}
	select {
	case host := <-dialed:
		if host != "127.0.0.1:1" {
			t.Errorf("dialed %s", host)
		}
	default:
		t.Fatal("the peer's dialer was not used")
	}
}
