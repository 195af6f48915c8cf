package hostile

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/protocol"
	"github.com/sluice-io/sluice/internal/testbin"
	"github.com/sluice-io/sluice/internal/testutil"
)

// limitsNode is a single-node server with its debug listener, for the
// connection and request-memory limits (finding 3 and part of finding 5).
type limitsNode struct {
	srv   *testbin.Server
	debug string
}

func startLimitsNode(t *testing.T, wrap []string, overrides ...string) *limitsNode {
	t.Helper()
	debug := "127.0.0.1:" + strconv.Itoa(testbin.FreePort(t))
	srv := testbin.StartServer(t, binaryPath, testbin.ServerConfig{DataDir: t.TempDir(), Wrap: wrap,
		Overrides: append([]string{"sluice.debug.listener=" + debug}, overrides...)})
	return &limitsNode{srv: srv, debug: debug}
}

// metric is the value of one series of the node's /metrics page (name and
// labels as exposed, labels sorted), 0 when absent.
func (n *limitsNode) metric(t *testing.T, series string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + n.debug + "/metrics")
	if err != nil {
		t.Fatalf("metrics: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("metric %s: %v", line, err)
			}
			return f
		}
	}
	return 0
}

func (n *limitsNode) memory(t *testing.T) testbin.Memory {
	t.Helper()
	m, err := n.srv.Memory()
	if err != nil {
		t.Fatalf("server memory: %v", err)
	}
	return m
}

// apiVersions sends an ApiVersions request on c and reads its answer within
// timeout.
func apiVersions(c net.Conn, timeout time.Duration) error {
	c.SetDeadline(time.Now().Add(timeout))
	defer c.SetDeadline(time.Time{})
	req := kmsg.NewPtrApiVersionsRequest()
	if _, err := c.Write(kmsg.NewRequestFormatter().AppendRequest(nil, req, 1)); err != nil {
		return err
	}
	_, err := protocol.ReadFrame(c, 1<<20, nil)
	return err
}

// servedConn dials addr and checks the connection is served.
func servedConn(addr string, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	if err := apiVersions(c, timeout); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// normalClientWorks creates a topic, produces a record and reads it back
// with franz-go.
func normalClientWorks(t *testing.T, addr, topic string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, topic); err != nil {
		t.Fatalf("create %s: %v", topic, err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("intact")}).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	fetches := cl.PollRecords(ctx, 1)
	if err := fetches.Err(); err != nil {
		t.Fatalf("consume: %v", err)
	}
	if recs := fetches.Records(); len(recs) != 1 || string(recs[0].Value) != "intact" {
		t.Fatalf("consumed %v, want the record produced", recs)
	}
}

func closeAll(conns []net.Conn) {
	for _, c := range conns {
		c.Close()
	}
}

// Finding 3: out of file descriptors, the acceptor used to stop for good.
// Under prlimit --nofile=256, connections are opened until the server can
// accept no more (EMFILE), then released: the node must accept again
// within a second and serve a normal client, the failures counted and
// logged.
func TestAcceptSurvivesFileDescriptorExhaustion(t *testing.T) {
	n := startLimitsNode(t, []string{"prlimit", "--nofile=256", "--"})
	var held []net.Conn
	defer func() { closeAll(held) }()
	for len(held) < 1000 {
		c, err := servedConn(n.srv.Addr(), 500*time.Millisecond)
		if err != nil {
			break
		}
		held = append(held, c)
	}
	if len(held) == 1000 {
		t.Fatal("1,000 connections served under a limit of 256 files")
	}
	testutil.Eventually(t, 10*time.Second, func() bool {
		return strings.Contains(n.srv.Logs(), "accept failed; retrying") && strings.Contains(n.srv.Logs(), "EMFILE")
	}, "no accept failure logged after %d connections", len(held))
	t.Logf("%d connections served before accept failed with EMFILE", len(held))

	closeAll(held)
	held = nil
	released := time.Now()
	var back net.Conn
	testutil.EventuallyNoError(t, 10*time.Second, func() error {
		c, err := servedConn(n.srv.Addr(), 200*time.Millisecond)
		back = c
		return err
	}, "the node does not accept after file descriptors were released")
	defer back.Close()
	took := time.Since(released)
	t.Logf("accepting again %s after the release", took)
	if took > time.Second {
		t.Fatalf("the node accepted again only %s after file descriptors were released, want within 1 s", took)
	}
	if got := n.metric(t, `sluice_acceptor_errors_total{error="EMFILE",listener="PLAINTEXT"}`); got < 1 {
		t.Fatalf("sluice_acceptor_errors_total{error=EMFILE} = %v", got)
	}
	normalClientWorks(t, n.srv.Addr(), "after-emfile")
	if exited, err := n.srv.Exited(); exited {
		t.Fatalf("server exited: %v", err)
	}
}

// announceFrame opens a connection and sends a frame's size prefix and the
// first body bytes of it.
func announceFrame(t *testing.T, addr string, size int, body int) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	wire := binary.BigEndian.AppendUint32(nil, uint32(size))
	// A Produce v9 header first, so the bytes read like a request's start.
	wire = append(wire, 0, 0, 0, 9, 0, 0, 0, 1, 0, 0)
	wire = append(wire, make([]byte, max(0, body-10))...)
	go func() {
		// The server may stop reading (its budget is spent): the write
		// then blocks until the test closes the connection.
		c.Write(wire)
	}()
	return c
}

// Finding 5: a frame's size prefix allocated the whole frame at once (ten
// 100 MiB announcements held about 1 GiB). Ten concurrent announcements of
// socket.request.max.bytes (100 MiB) with ten bytes behind them must hold
// one 16 KiB chunk each: the node's resident memory stays within 32 MiB of
// its idle size, its peak too, and it serves a normal client.
func TestFrameAnnouncementsHoldOnlyWhatArrived(t *testing.T) {
	const bound = 32 << 20
	n := startLimitsNode(t, nil)
	normalClientWorks(t, n.srv.Addr(), "before")
	idle := n.memory(t)
	var conns []net.Conn
	defer func() { closeAll(conns) }()
	for range 10 {
		conns = append(conns, announceFrame(t, n.srv.Addr(), protocol.DefaultMaxRequestSize, 10))
	}
	testutil.Eventually(t, 10*time.Second, func() bool {
		return n.metric(t, "sluice_memory_pool_used_bytes") == 10*16<<10
	}, "the ten announced frames do not hold 16 KiB each")
	during := n.memory(t)
	t.Logf("idle RSS %d MiB (peak %d MiB); holding ten 100 MiB announcements: RSS %d MiB, peak %d MiB",
		idle.RSS>>20, idle.Peak>>20, during.RSS>>20, during.Peak>>20)
	if during.RSS-idle.RSS > bound {
		t.Fatalf("RSS grew by %d MiB holding ten announcements, bound %d MiB", (during.RSS-idle.RSS)>>20, bound>>20)
	}
	if during.Peak > max(idle.Peak, idle.RSS+bound) {
		t.Fatalf("peak RSS %d MiB, above the idle peak %d MiB and the idle RSS plus %d MiB", during.Peak>>20, idle.Peak>>20, bound>>20)
	}
	normalClientWorks(t, n.srv.Addr(), "during")
	closeAll(conns)
	conns = nil
	testutil.Eventually(t, 10*time.Second, func() bool { return n.metric(t, "sluice_memory_pool_used_bytes") == 0 },
		"request memory not released when the announcing connections closed")
}

// With queued.max.request.bytes set (Kafka's key), request bytes actually
// sent are capped too: ten connections each sending 12 MiB of a 32 MiB
// frame would hold 160 MiB of 16 MiB buffers; capped at 32 MiB, at most
// the cap plus one frame (the overdraft) is held, the other connections'
// reads paused, and the node's peak RSS grows by less than 96 MiB (the
// cap, one frame and 32 MiB for garbage not collected yet; uncapped it
// grows by about 135 MiB), while a normal client is served (its requests
// are small: they never wait).
func TestQueuedMaxRequestBytesCapsRequestsInFlight(t *testing.T) {
	const frame, sent, capBytes, bound = 32 << 20, 12 << 20, 32 << 20, 96 << 20
	n := startLimitsNode(t, nil, "socket.request.max.bytes="+strconv.Itoa(frame), "queued.max.request.bytes="+strconv.Itoa(capBytes))
	normalClientWorks(t, n.srv.Addr(), "before")
	idle := n.memory(t)
	var conns []net.Conn
	defer func() { closeAll(conns) }()
	for range 10 {
		conns = append(conns, announceFrame(t, n.srv.Addr(), frame, sent))
	}
	// Holding 12 MiB takes a 16 MiB buffer: two fit the cap and one more
	// may overdraw it, so at least seven connections end up waiting.
	testutil.Eventually(t, 30*time.Second, func() bool {
		return n.metric(t, "sluice_memory_pool_waiting_connections") >= 7
	}, "fewer than seven connections' reads paused for the cap")
	used := n.metric(t, "sluice_memory_pool_used_bytes")
	during := n.memory(t)
	t.Logf("idle RSS %d MiB; ten connections sending 12 MiB of 32 MiB frames under a 32 MiB cap: %d MiB in flight, RSS %d MiB, peak %d MiB",
		idle.RSS>>20, int64(used)>>20, during.RSS>>20, during.Peak>>20)
	if used > capBytes+frame {
		t.Fatalf("%v B of requests in flight, above the cap plus one frame", used)
	}
	if during.Peak-idle.RSS > bound {
		t.Fatalf("peak RSS %d MiB above idle, bound %d MiB", (during.Peak-idle.RSS)>>20, bound>>20)
	}
	normalClientWorks(t, n.srv.Addr(), "capped")
	closeAll(conns)
	conns = nil
	testutil.Eventually(t, 10*time.Second, func() bool { return n.metric(t, "sluice_memory_pool_used_bytes") == 0 },
		"request memory not released when the connections closed")
}

// Finding 3, max.connections.per.ip (Kafka's ConnectionQuotas): with a
// limit of 5, the sixth connection from 127.0.0.1 is closed as soon as it
// is accepted (Kafka tells the client nothing else), counted, and once one
// of the five leaves the address may connect again.
func TestMaxConnectionsPerIPClosesTheNextConnection(t *testing.T) {
	const limit = 5
	n := startLimitsNode(t, nil, "max.connections.per.ip="+strconv.Itoa(limit))
	var held []net.Conn
	defer func() { closeAll(held) }()
	for range limit {
		// The start-up check's client may still hold a connection for a
		// moment: retry until it has gone.
		var c net.Conn
		testutil.EventuallyNoError(t, 10*time.Second, func() error {
			var err error
			c, err = servedConn(n.srv.Addr(), time.Second)
			return err
		}, "connection %d of %d refused", len(held)+1, limit)
		held = append(held, c)
	}
	over, err := net.Dial("tcp", n.srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer over.Close()
	over.SetReadDeadline(time.Now().Add(5 * time.Second))
	var one [1]byte
	_, err = over.Read(one[:])
	var ne net.Error
	if err == nil || (errors.As(err, &ne) && ne.Timeout()) {
		t.Fatalf("connection %d stayed open: %v", limit+1, err)
	}
	if got := n.metric(t, `sluice_connections_rejected_total{listener="PLAINTEXT",reason="max_connections_per_ip"}`); got != 1 {
		t.Fatalf("sluice_connections_rejected_total{reason=max_connections_per_ip} = %v, want 1", got)
	}
	if !strings.Contains(n.srv.Logs(), "rejected connection: address already has the configured maximum of connections") {
		t.Fatal("the rejection is not logged")
	}
	held[0].Close()
	held = held[1:]
	testutil.EventuallyNoError(t, 10*time.Second, func() error {
		c, err := servedConn(n.srv.Addr(), time.Second)
		if err == nil {
			held = append(held, c)
		}
		return err
	}, "a connection within the limit again is refused")
}

// Finding 5, write deadline: a client that sends Fetch requests and never
// reads the answers fills the socket buffers; the server's write makes no
// progress and after connections.max.idle.ms (3 s here) the connection is
// closed, while a normal client is served throughout.
func TestClientThatNeverReadsIsClosedAfterTheDeadline(t *testing.T) {
	const idle = 3 * time.Second
	n := startLimitsNode(t, nil, fmt.Sprintf("connections.max.idle.ms=%d", idle.Milliseconds()))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(n.srv.Addr()), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "unread"); err != nil {
		t.Fatal(err)
	}
	for range 4 { // 4 MiB of incompressible records
		var recs []*kgo.Record
		for range 16 {
			value := make([]byte, 64<<10)
			rand.Read(value)
			recs = append(recs, &kgo.Record{Topic: "unread", Value: value})
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	stuck, err := net.Dial("tcp", n.srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer stuck.Close()
	stuck.(*net.TCPConn).SetReadBuffer(4 << 10)
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(11)
	req.MaxWaitMillis, req.MaxBytes = 0, 4<<20
	topic := kmsg.NewFetchRequestTopic()
	topic.Topic = "unread"
	part := kmsg.NewFetchRequestTopicPartition()
	part.PartitionMaxBytes = 4 << 20
	topic.Partitions = append(topic.Partitions, part)
	req.Topics = append(req.Topics, topic)
	var wire []byte
	for i := range 20 { // 20 answers of 4 MiB, far more than the socket buffers hold
		wire = kmsg.NewRequestFormatter().AppendRequest(wire, req, int32(i))
	}
	if _, err := stuck.Write(wire); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()

	normalClientWorks(t, n.srv.Addr(), "while-stuck")
	testutil.Eventually(t, idle+30*time.Second, func() bool {
		return n.metric(t, `sluice_request_errors_total{reason="write",request="Fetch"}`) == 1
	}, "the connection whose client never reads was not closed")
	took := time.Since(sent)
	t.Logf("closed %s after its requests were sent (deadline %s)", took.Round(100*time.Millisecond), idle)
	if took < idle {
		t.Fatalf("closed after %s, before the %s deadline", took, idle)
	}
	if !strings.Contains(n.srv.Logs(), "reason=write") {
		t.Fatal("the closing is not logged with its reason")
	}
	normalClientWorks(t, n.srv.Addr(), "after-stuck")
}
