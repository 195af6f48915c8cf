package node

import (
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/internal/testbin"
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

// A node advertising an address it cannot reach itself (a container
// publishing another host port) still serves console pages: the console
// dials its own advertised address at loopback.
func TestConsoleDialsItsOwnAdvertisedAddressAtLoopback(t *testing.T) {
	port, unreachable := testbin.FreePort(t), testbin.FreePort(t)
	_, base := consoleNode(t, map[string]string{
		"listeners":            "PLAINTEXT://0.0.0.0:" + strconv.Itoa(port) + ",CONTROLLER://127.0.0.1:{ctrl}",
		"advertised.listeners": "PLAINTEXT://127.0.0.1:" + strconv.Itoa(unreachable),
	})
	resp, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || strings.Contains(string(body), "unable to dial") {
		t.Fatalf("overview: %s, unable to dial the advertised address: %t", resp.Status, strings.Contains(string(body), "unable to dial"))
	}
}
