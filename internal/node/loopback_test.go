package node

import (
	"net"
	"testing"
)

func TestLoopbackOfWildcard(t *testing.T) {
	for _, tc := range []struct {
		addr net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.IPv4zero, Port: 9092}, "127.0.0.1:9092"},
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 9092}, "127.0.0.1:9092"}, // how Go reports a 0.0.0.0 bind
		{&net.TCPAddr{Port: 9092}, "127.0.0.1:9092"},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 9092}, "[::1]:9092"},
		{&net.TCPAddr{IP: net.IPv4(10, 0, 0, 7), Port: 9092}, "10.0.0.7:9092"},
	} {
		if got := loopbackOf(tc.addr); got != tc.want {
			t.Errorf("loopbackOf(%v) = %s, want %s", tc.addr, got, tc.want)
		}
	}
	// A 0.0.0.0 listener, as Go binds it, answers on 127.0.0.1.
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", loopbackOf(ln.Addr()))
	if err != nil {
		t.Fatalf("dial %s for %v: %v", loopbackOf(ln.Addr()), ln.Addr(), err)
	}
	c.Close()
}
