package server

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/testutil"
)

// served reports whether a new connection to addr answers ApiVersions; the
// connection stays open until the test ends.
func served(t *testing.T, addr string) bool {
	t.Helper()
	c := dial(t, addr)
	send(t, c, kmsg.NewPtrApiVersionsRequest(), 3, 1)
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	var head [4]byte
	_, err := c.Read(head[:])
	return err == nil
}

// A connection from an address that already has max.connections.per.ip is
// closed as soon as it is accepted (Kafka's TooManyConnectionsException:
// the client sees only the close), counted, and the address may connect
// again once one of its connections ends.
func TestMaxConnectionsPerIPClosesTheNextConnection(t *testing.T) {
	ts := startServer(t, func(o *Options) { o.MaxConnectionsPerIP = 2 })
	var held []net.Conn
	for i := range 2 {
		c := dial(t, ts.addr)
		send(t, c, kmsg.NewPtrApiVersionsRequest(), 3, int32(i))
		readResponse(t, c, false)
		held = append(held, c)
	}
	over := dial(t, ts.addr)
	expectClosed(t, over)
	if got := counterValue(t, ts.srv.metrics.rejected.WithLabelValues("PLAINTEXT", rejectPerIP)); got != 1 {
		t.Fatalf("sluice_connections_rejected_total{reason=%s} = %v, want 1", rejectPerIP, got)
	}
	held[0].Close()
	testutil.Eventually(t, 10*time.Second, func() bool { return ts.srv.quotas.perIPCount(netip.MustParseAddr("127.0.0.1")) == 1 },
		"the closed connection is still counted against its address")
	if !served(t, ts.addr) {
		t.Fatal("a connection within the limit again was not served")
	}
}

func TestMaxConnectionsPerIPOverrides(t *testing.T) {
	for name, tc := range map[string]struct {
		perIP     int
		overrides string
		allowed   int
	}{
		"override below the default": {perIP: 5, overrides: "127.0.0.1:1", allowed: 1},
		"zero but the overrides":     {perIP: 0, overrides: "10.0.0.1:7, 127.0.0.1:2", allowed: 2},
		"host name":                  {perIP: 5, overrides: "localhost:1", allowed: 1},
		"zero without overrides":     {perIP: 0, overrides: "", allowed: 4},
	} {
		t.Run(name, func(t *testing.T) {
			ts := startServer(t, func(o *Options) {
				o.MaxConnectionsPerIP, o.MaxConnectionsPerIPOverrides = tc.perIP, tc.overrides
			})
			for i := range tc.allowed {
				if !served(t, ts.addr) {
					t.Fatalf("connection %d of %d allowed was not served", i+1, tc.allowed)
				}
			}
			if tc.overrides == "" {
				return
			}
			expectClosed(t, dial(t, ts.addr))
		})
	}
}

func TestParsePerIPOverrides(t *testing.T) {
	got, err := parsePerIPOverrides(" 127.0.0.1:3 ,::1:4,[fe80::1]:0,")
	if err != nil {
		t.Fatal(err)
	}
	want := map[netip.Addr]int{
		netip.MustParseAddr("127.0.0.1"): 3, netip.MustParseAddr("::1"): 4, netip.MustParseAddr("fe80::1"): 0,
	}
	if len(got) != len(want) {
		t.Fatalf("parsed %v, want %v", got, want)
	}
	for a, n := range want {
		if got[a] != n {
			t.Fatalf("parsed %v, want %v", got, want)
		}
	}
	for _, bad := range []string{"127.0.0.1", "127.0.0.1:x", "127.0.0.1:-1", "no-such-host.invalid:2"} {
		if _, err := parsePerIPOverrides(bad); err == nil {
			t.Errorf("parsePerIPOverrides(%q) accepted", bad)
		}
	}
}

// Kafka lets inter-broker connections past max.connections when the server
// has other listeners, and closes the least recently active connection of
// another listener to make room.
func TestInterBrokerListenerPassesMaxConnections(t *testing.T) {
	ts := startServer(t, func(o *Options) {
		o.MaxConnections = 1
		o.InterBrokerListener = "REPLICATION"
		o.Listeners = append(o.Listeners, Listener{Name: "REPLICATION", Address: "127.0.0.1:0"})
	})
	client := dial(t, ts.addr)
	send(t, client, kmsg.NewPtrApiVersionsRequest(), 3, 1)
	readResponse(t, client, false)

	replica := dial(t, ts.srv.Addr("REPLICATION").String())
	send(t, replica, kmsg.NewPtrApiVersionsRequest(), 3, 2)
	if corr, _ := readResponse(t, replica, false); corr != 2 {
		t.Fatalf("inter-broker connection answered correlation %d", corr)
	}
	expectClosed(t, client)
	if got := counterValue(t, ts.srv.metrics.rejected.WithLabelValues("PLAINTEXT", rejectMaxConnections)); got != 1 {
		t.Fatalf("sluice_connections_rejected_total{reason=%s} = %v, want 1", rejectMaxConnections, got)
	}
}

// With one listener there is nothing to protect it from: the inter-broker
// listener waits for a slot like any other, as in Kafka.
func TestSingleInterBrokerListenerWaitsForSlot(t *testing.T) {
	ts := startServer(t, func(o *Options) {
		o.MaxConnections = 1
		o.InterBrokerListener = "PLAINTEXT"
	})
	first := dial(t, ts.addr)
	send(t, first, kmsg.NewPtrApiVersionsRequest(), 3, 1)
	readResponse(t, first, false)
	second := dial(t, ts.addr)
	send(t, second, kmsg.NewPtrApiVersionsRequest(), 3, 2)
	second.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	var one [1]byte
	if _, err := second.Read(one[:]); err == nil {
		t.Fatal("second connection served above max.connections")
	}
	if got := counterValue(t, ts.srv.metrics.rejected.WithLabelValues("PLAINTEXT", rejectMaxConnections)); got != 0 {
		t.Fatalf("a connection was closed to make room: %v", got)
	}
}

// An acceptor waiting in accept holds no slot: with max.connections 1 and
// two listeners, a client of either listener is served.
func TestIdleAcceptorHoldsNoSlot(t *testing.T) {
	ts := startServer(t, func(o *Options) {
		o.MaxConnections = 1
		o.Listeners = append(o.Listeners, Listener{Name: "OTHER", Address: "127.0.0.1:0"})
	})
	for _, addr := range []string{ts.srv.Addr("OTHER").String(), ts.addr} {
		c := dial(t, addr)
		send(t, c, kmsg.NewPtrApiVersionsRequest(), 3, 1)
		readResponse(t, c, false)
		c.Close()
		testutil.Eventually(t, 10*time.Second, func() bool { return ts.srv.quotas.perIPCount(netip.MustParseAddr("127.0.0.1")) == 0 },
			"the closed connection still holds its slot")
	}
}

// TestSetConnectionLimitsLive: a running server's per-address limit
// lowered refuses the next connection while keeping those open; raised
// again, the address connects.
func TestSetConnectionLimitsLive(t *testing.T) {
	ts := startServer(t, nil)
	if !served(t, ts.addr) || !served(t, ts.addr) {
		t.Fatal("no limit yet, but a connection was not served")
	}
	if err := ts.srv.SetConnectionLimits(ConnectionLimits{MaxConnectionsPerIP: 2}); err != nil {
		t.Fatal(err)
	}
	expectClosed(t, dial(t, ts.addr))
	if err := ts.srv.SetConnectionLimits(ConnectionLimits{MaxConnectionsPerIP: 3}); err != nil {
		t.Fatal(err)
	}
	if !served(t, ts.addr) {
		t.Fatal("a connection under the raised limit was not served")
	}
	if err := ts.srv.SetConnectionLimits(ConnectionLimits{MaxConnectionsPerIPOverrides: "bad"}); err == nil {
		t.Fatal("a malformed override was applied")
	}
	if _, perIP := ts.srv.connectionLimits(); perIP != 3 {
		t.Fatalf("a refused update changed the per-address limit to %d", perIP)
	}
}

// TestRaisedMaxConnectionsWakesTheAcceptor: an acceptor waiting at
// max.connections accepts once the limit is raised, without a release.
func TestRaisedMaxConnectionsWakesTheAcceptor(t *testing.T) {
	ts := startServer(t, func(o *Options) { o.MaxConnections = 1 })
	if !served(t, ts.addr) {
		t.Fatal("the first connection was not served")
	}
	waiting := dial(t, ts.addr)
	send(t, waiting, kmsg.NewPtrApiVersionsRequest(), 3, 7)
	if err := ts.srv.SetConnectionLimits(ConnectionLimits{MaxConnections: 2}); err != nil {
		t.Fatal(err)
	}
	readResponse(t, waiting, false)
}
