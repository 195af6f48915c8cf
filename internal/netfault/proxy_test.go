package netfault

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/testutil"
)

// echoServer echoes every connection until the test ends.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		var conns sync.WaitGroup
		defer conns.Wait()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer conns.Done()
				defer c.Close()
				io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

// sourceIdentity attributes a connection to node n when it comes from
// 127.0.0.n: the tests dial from distinct loopback addresses.
func sourceIdentity(client, _ net.Addr) int {
	ip := client.(*net.TCPAddr).IP.To4()
	if ip == nil || ip[0] != 127 {
		return UnknownNode
	}
	return int(ip[3])
}

func newTestProxy(t *testing.T, node int, target string) (*Proxy, string) {
	t.Helper()
	p := NewProxy(sourceIdentity, nil)
	t.Cleanup(p.Close)
	addr, err := p.Listen(node, target)
	if err != nil {
		t.Fatal(err)
	}
	return p, addr
}

// dialFrom connects to addr from 127.0.0.<node>.
func dialFrom(t *testing.T, node int, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(node))}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// echo writes msg and reads it back within wait; it returns the error
// that stopped it.
func echo(c net.Conn, msg string, wait time.Duration) error {
	if _, err := c.Write([]byte(msg)); err != nil {
		return err
	}
	return readBack(c, msg, wait)
}

func readBack(c net.Conn, msg string, wait time.Duration) error {
	c.SetReadDeadline(time.Now().Add(wait))
	buf := make([]byte, len(msg))
	if _, err := io.ReadFull(c, buf); err != nil {
		return err
	}
	if string(buf) != msg {
		return errors.New("echoed " + string(buf) + ", want " + msg)
	}
	return nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func TestProxyRefuseClosesBothDirectionsUntilHeal(t *testing.T) {
	p, addr := newTestProxy(t, 1, echoServer(t))
	into := dialFrom(t, 2, addr)
	if err := echo(into, "before", 5*time.Second); err != nil {
		t.Fatalf("before the cut: %v", err)
	}

	p.Cut(1, Refuse)
	if err := readBack(into, "x", 5*time.Second); err == nil || isTimeout(err) {
		t.Fatalf("an open connection into the cut node: read gave %v, want it closed", err)
	}
	if err := echo(dialFrom(t, 3, addr), "during", 5*time.Second); err == nil || isTimeout(err) {
		t.Fatalf("a new connection into the cut node: %v, want it closed", err)
	}

	p.Heal(1)
	if err := echo(dialFrom(t, 2, addr), "after", 5*time.Second); err != nil {
		t.Fatalf("after the heal: %v", err)
	}
}

func TestProxyCutsConnectionsFromTheCutNodeOnly(t *testing.T) {
	p, addr := newTestProxy(t, 1, echoServer(t))
	fromCut := dialFrom(t, 2, addr)
	fromOther := dialFrom(t, 3, addr)
	fromSelf := dialFrom(t, 1, addr)
	for _, c := range []net.Conn{fromCut, fromOther, fromSelf} {
		if err := echo(c, "before", 5*time.Second); err != nil {
			t.Fatalf("before the cut: %v", err)
		}
	}

	p.Cut(2, Refuse)
	if err := readBack(fromCut, "x", 5*time.Second); err == nil || isTimeout(err) {
		t.Fatalf("connection from the cut node: read gave %v, want it closed", err)
	}
	if err := echo(dialFrom(t, 2, addr), "new", 5*time.Second); err == nil || isTimeout(err) {
		t.Fatalf("new connection from the cut node: %v, want it closed", err)
	}
	if err := echo(fromOther, "other", 5*time.Second); err != nil {
		t.Fatalf("connection between two other nodes: %v", err)
	}

	// A node's connection to itself survives its own cut.
	p.Cut(1, Refuse)
	if err := echo(fromSelf, "self", 5*time.Second); err != nil {
		t.Fatalf("connection of the cut node to itself: %v", err)
	}
}

func TestProxyCutLinkSeparatesTwoNodesOnly(t *testing.T) {
	p, addr := newTestProxy(t, 1, echoServer(t))
	fromTwo := dialFrom(t, 2, addr)
	fromThree := dialFrom(t, 3, addr)

	p.CutLink(2, 1, Refuse)
	if err := readBack(fromTwo, "x", 5*time.Second); err == nil || isTimeout(err) {
		t.Fatalf("connection across the cut link: read gave %v, want it closed", err)
	}
	if err := echo(dialFrom(t, 2, addr), "new", 5*time.Second); err == nil || isTimeout(err) {
		t.Fatalf("new connection across the cut link: %v, want it closed", err)
	}
	if err := echo(fromThree, "other", 5*time.Second); err != nil {
		t.Fatalf("connection from a third node: %v", err)
	}

	p.HealLink(1, 2)
	if err := echo(dialFrom(t, 2, addr), "after", 5*time.Second); err != nil {
		t.Fatalf("after the heal: %v", err)
	}
}

func TestProxyBlackholeStallsUntilHeal(t *testing.T) {
	p, addr := newTestProxy(t, 1, echoServer(t))
	open := dialFrom(t, 2, addr)
	if err := echo(open, "before", 5*time.Second); err != nil {
		t.Fatalf("before the cut: %v", err)
	}

	p.Cut(1, Blackhole)
	if err := echo(open, "held", 300*time.Millisecond); !isTimeout(err) {
		t.Fatalf("open connection during a blackhole: %v, want a read timeout", err)
	}
	fresh := dialFrom(t, 3, addr)
	if err := echo(fresh, "queued", 300*time.Millisecond); !isTimeout(err) {
		t.Fatalf("new connection during a blackhole: %v, want a read timeout", err)
	}

	// Healing delivers what the cut held, in order, as TCP would.
	p.Heal(1)
	if err := readBack(open, "held", 5*time.Second); err != nil {
		t.Fatalf("open connection after the heal: %v", err)
	}
	if err := readBack(fresh, "queued", 5*time.Second); err != nil {
		t.Fatalf("new connection after the heal: %v", err)
	}
}

func TestProxyCloseEndsEveryConnection(t *testing.T) {
	p, addr := newTestProxy(t, 1, echoServer(t))
	live := dialFrom(t, 2, addr)
	if err := echo(live, "x", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	p.Cut(3, Blackhole)
	stalled := dialFrom(t, 3, addr)
	stalled.Write([]byte("y"))

	p.Close() // returns once every proxy goroutine has ended
	if n := p.Links(); n != 0 {
		t.Fatalf("%d links after Close", n)
	}
	for _, c := range []net.Conn{live, stalled} {
		if err := readBack(c, "z", 5*time.Second); err == nil || isTimeout(err) {
			t.Fatalf("read after Close gave %v, want the connection closed", err)
		}
	}
	if _, err := p.Listen(1, addr); err == nil {
		t.Fatal("Listen after Close succeeded")
	}
}

func TestSocketOwnerFindsThisProcess(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	inode, ok, err := socketInode(s.RemoteAddr().(*net.TCPAddr), s.LocalAddr().(*net.TCPAddr))
	if err != nil || !ok {
		t.Fatalf("socketInode: %q %v %v", inode, ok, err)
	}
	if !ownsSocket(os.Getpid(), inode) {
		t.Fatalf("this process does not own socket %s", inode)
	}
	if ownsSocket(os.Getpid(), "0") {
		t.Fatal("this process owns socket inode 0")
	}
	if _, ok, _ := socketInode(s.LocalAddr().(*net.TCPAddr), &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}); ok {
		t.Fatal("found a socket for a connection that does not exist")
	}
}

func TestOwnersIdentifyAnotherProcess(t *testing.T) {
	if _, err := os.Stat("/proc/net/tcp"); err != nil {
		t.Skip("no /proc/net/tcp:", err)
	}
	owners := NewOwners(2)
	proxy := NewProxy(owners.Identify, nil)
	t.Cleanup(proxy.Close)
	addr, err := proxy.Listen(1, echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(addr)
	// A shell of node 0 holds a connection to node 1 open.
	child := exec.Command("bash", "-c", "exec 3<>/dev/tcp/"+host+"/"+port+"; sleep 30")
	if err := child.Start(); err != nil {
		t.Skip("no bash:", err)
	}
	t.Cleanup(func() {
		child.Process.Kill()
		child.Wait()
	})
	owners.Set(0, child.Process.Pid)

	var from []int
	testutil.EventuallyNoError(t, 10*time.Second, func() error {
		proxy.mu.Lock()
		from = from[:0]
		for l := range proxy.mu.links {
			from = append(from, l.from)
		}
		proxy.mu.Unlock()
		if len(from) != 1 {
			return fmt.Errorf("links from %v", from)
		}
		return nil
	}, "want one link, from node 0")
	if from[0] != 0 {
		t.Fatalf("connection attributed to node %d, want 0", from[0])
	}
}
