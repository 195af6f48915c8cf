package server

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/api"
	"github.com/sluice-io/sluice/internal/protocol"
	"github.com/sluice-io/sluice/internal/purgatory"
	"github.com/sluice-io/sluice/internal/testutil"
)

type testServer struct {
	srv     *Server
	addr    string
	metrics *prometheus.Registry
}

func startServer(t *testing.T, mutate func(*Options), handlers ...api.Handler) *testServer {
	t.Helper()
	return startServerWith(t, mutate, nil, handlers...)
}

// startServerWith is startServer with a hook on the server before it starts.
func startServerWith(t *testing.T, mutate func(*Options), before func(*Server), handlers ...api.Handler) *testServer {
	t.Helper()
	reg, err := api.NewRegistry(api.BrokerRelease(), api.RegistryInfo{}, handlers)
	if err != nil {
		t.Fatal(err)
	}
	metrics := prometheus.NewRegistry()
	opts := Options{
		Listeners: []Listener{{Name: "PLAINTEXT", Address: "127.0.0.1:0"}},
		Registry:  reg,
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
		Metrics:   metrics,
	}
	if mutate != nil {
		mutate(&opts)
	}
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if before != nil {
		before(srv)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if srv.isStopping() {
			return
		}
		shutdownNow(srv)
	})
	return &testServer{srv: srv, addr: srv.Addr(opts.Listeners[0].Name).String(), metrics: metrics}
}

// shutdownNow shuts srv down, giving in-flight requests 5 s.
func shutdownNow(srv *Server) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(ctx)
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	t.Cleanup(func() { c.Close() })
	return c
}

func send(t *testing.T, c net.Conn, req kmsg.Request, version int16, correlationID int32) {
	t.Helper()
	req.SetVersion(version)
	if _, err := c.Write(kmsg.NewRequestFormatter(kmsg.FormatterClientID("raw")).AppendRequest(nil, req, correlationID)); err != nil {
		t.Fatal(err)
	}
}

// readResponse reads a frame and splits off a header of the given version.
func readResponse(t *testing.T, c net.Conn, flexibleHeader bool) (int32, []byte) {
	t.Helper()
	frame, err := protocol.ReadFrame(c, 1<<30, nil)
	if err != nil {
		t.Fatalf("reading response: %v", err)
	}
	correlationID := int32(binary.BigEndian.Uint32(frame))
	body := frame[4:]
	if flexibleHeader {
		if body[0] != 0 {
			t.Fatalf("response header tags %d, want none", body[0])
		}
		body = body[1:]
	}
	return correlationID, body
}

func expectClosed(t *testing.T, c net.Conn) {
	t.Helper()
	var one [1]byte
	_, err := c.Read(one[:])
	if err == nil {
		t.Fatal("connection still open: read a byte")
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("connection still open: read timed out")
	}
}

func metadataHandler(handle func(context.Context, *api.Request) api.Response) api.Handler {
	if handle == nil {
		handle = func(_ context.Context, req *api.Request) api.Response {
			return api.Reply(req.Body.ResponseKind())
		}
	}
	return api.Handler{Key: 3, MinVersion: 0, MaxVersion: 12, Handle: handle}
}

func TestApiVersionsOverTCP(t *testing.T) {
	ts := startServer(t, nil)
	c := dial(t, ts.addr)
	req := kmsg.NewPtrApiVersionsRequest()
	req.ClientSoftwareName, req.ClientSoftwareVersion = "raw", "1"
	send(t, c, req, 3, 77)
	corr, body := readResponse(t, c, false) // ApiVersions: header v0 even at v3
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.SetVersion(3)
	if err := resp.ReadFrom(body); err != nil {
		t.Fatal(err)
	}
	if corr != 77 || resp.ErrorCode != 0 || len(resp.ApiKeys) != 1 || resp.ApiKeys[0].ApiKey != 18 {
		t.Fatalf("corr %d, response %+v", corr, resp)
	}
	// The request is counted once its response is written, as Kafka does.
	testutil.Eventually(t, 5*time.Second, func() bool {
		return seriesValue(t, ts.metrics, "kafka_network_requestmetrics_requests_total", "request", "ApiVersions", "version", "3") == 1
	}, "requests_total{ApiVersions,3} = 1")
}

func TestApiVersionsUnsupportedVersionGetsKIP511Answer(t *testing.T) {
	ts := startServer(t, nil)
	c := dial(t, ts.addr)
	send(t, c, kmsg.NewPtrApiVersionsRequest(), 127, 3)
	corr, body := readResponse(t, c, false)
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.SetVersion(0)
	if err := resp.ReadFrom(body); err != nil {
		t.Fatal(err)
	}
	if corr != 3 || resp.ErrorCode != kerr.UnsupportedVersion.Code || len(resp.ApiKeys) != 1 || resp.ApiKeys[0].MaxVersion != 5 {
		t.Fatalf("corr %d, response %+v", corr, resp)
	}
	// The connection stays open: the client retries at a version we serve.
	send(t, c, kmsg.NewPtrApiVersionsRequest(), 2, 4)
	if corr, _ := readResponse(t, c, false); corr != 4 {
		t.Fatalf("retry answered with correlation %d", corr)
	}
}

func TestFrameAboveLimitClosesConnection(t *testing.T) {
	ts := startServer(t, func(o *Options) { o.MaxRequestSize = 1000 })
	c := dial(t, ts.addr)
	c.Write(binary.BigEndian.AppendUint32(nil, 1001))
	expectClosed(t, c)
	if got := counterValue(t, ts.srv.metrics.errors.WithLabelValues("unknown", reasonFrameTooLarge)); got != 1 {
		t.Fatalf("frame_too_large errors %v, want 1", got)
	}
}

func TestTruncatedHeaderClosesConnection(t *testing.T) {
	ts := startServer(t, nil)
	c := dial(t, ts.addr)
	c.Write([]byte{0, 0, 0, 3, 0, 18, 0})
	expectClosed(t, c)
}

func TestGarbledHeaderClosesConnection(t *testing.T) {
	ts := startServer(t, nil)
	c := dial(t, ts.addr)
	// ApiVersions v2, correlation 1, client id claiming 200 bytes but carrying 1.
	payload := []byte{0, 18, 0, 2, 0, 0, 0, 1, 0, 200, 'x'}
	c.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(payload))), payload...))
	expectClosed(t, c)
}

func TestUnknownKeyClosesConnection(t *testing.T) {
	ts := startServer(t, nil)
	c := dial(t, ts.addr)
	payload := []byte{0x30, 0x39, 0, 0, 0, 0, 0, 1, 0xff, 0xff}
	c.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(payload))), payload...))
	expectClosed(t, c)
}

func TestUnregisteredKeyClosesConnection(t *testing.T) {
	ts := startServer(t, nil)
	c := dial(t, ts.addr)
	send(t, c, kmsg.NewPtrMetadataRequest(), 4, 1)
	expectClosed(t, c)
}

func TestUnsupportedMetadataVersionClosesConnection(t *testing.T) {
	ts := startServer(t, nil, metadataHandler(nil))
	c := dial(t, ts.addr)
	send(t, c, kmsg.NewPtrMetadataRequest(), 13, 1)
	expectClosed(t, c)
	if got := counterValue(t, ts.srv.metrics.errors.WithLabelValues("Metadata", reasonUnsupportedVersion)); got != 1 {
		t.Fatalf("unsupported_version errors %v, want 1", got)
	}
}

func TestMalformedBodyClosesConnection(t *testing.T) {
	ts := startServer(t, nil, metadataHandler(nil))
	c := dial(t, ts.addr)
	// Metadata v12 header v2, then a topics array claiming 100 entries.
	payload := []byte{0, 3, 0, 12, 0, 0, 0, 1, 0xff, 0xff, 0, 101}
	c.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(payload))), payload...))
	expectClosed(t, c)
}

func TestFlexibleResponseHeaderAndNoResponse(t *testing.T) {
	ts := startServer(t, nil, metadataHandler(func(_ context.Context, req *api.Request) api.Response {
		if req.Header.CorrelationID == 1 {
			return api.NoResponse()
		}
		return api.Reply(req.Body.ResponseKind())
	}))
	c := dial(t, ts.addr)
	send(t, c, kmsg.NewPtrMetadataRequest(), 12, 1)
	send(t, c, kmsg.NewPtrMetadataRequest(), 12, 2)
	corr, body := readResponse(t, c, true)
	resp := kmsg.NewPtrMetadataResponse()
	resp.SetVersion(12)
	if err := resp.ReadFrom(body); err != nil || corr != 2 {
		t.Fatalf("corr %d, err %v; want the second request's answer only", corr, err)
	}
}

func TestOneRequestInFlightPerConnection(t *testing.T) {
	var inFlight, maxInFlight atomic.Int32
	release := make(chan struct{})
	ts := startServer(t, nil, metadataHandler(func(_ context.Context, req *api.Request) api.Response {
		n := inFlight.Add(1)
		if n > maxInFlight.Load() {
			maxInFlight.Store(n)
		}
		if req.Header.CorrelationID == 1 {
			<-release
		}
		inFlight.Add(-1)
		return api.Reply(req.Body.ResponseKind())
	}))
	c := dial(t, ts.addr)
	send(t, c, kmsg.NewPtrMetadataRequest(), 4, 1)
	send(t, c, kmsg.NewPtrMetadataRequest(), 4, 2)
	testutil.Eventually(t, 5*time.Second, func() bool { return inFlight.Load() >= 1 }, "first request handled")
	// A negative: the second request must not start while the first is
	// held, so only a pause can show it did not; 50 ms is ample for it to.
	time.Sleep(50 * time.Millisecond)
	close(release)
	for want := int32(1); want <= 2; want++ {
		if corr, _ := readResponse(t, c, false); corr != want {
			t.Fatalf("got correlation %d, want %d", corr, want)
		}
	}
	if maxInFlight.Load() != 1 {
		t.Fatalf("%d requests were handled at once on one connection", maxInFlight.Load())
	}
}

func TestGracefulShutdownFinishesInFlightRequest(t *testing.T) {
	entered := make(chan struct{})
	release := make(chan struct{})
	ts := startServer(t, nil, metadataHandler(func(_ context.Context, req *api.Request) api.Response {
		close(entered)
		<-release
		return api.Reply(req.Body.ResponseKind())
	}))
	c := dial(t, ts.addr)
	idle := dial(t, ts.addr)
	send(t, c, kmsg.NewPtrMetadataRequest(), 4, 9)
	<-entered
	shutdownErr := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		shutdownErr <- ts.srv.Shutdown(ctx)
	}()
	expectClosed(t, idle)
	close(release)
	if corr, _ := readResponse(t, c, false); corr != 9 {
		t.Fatalf("in-flight answer correlation %d", corr)
	}
	expectClosed(t, c)
	if err := <-shutdownErr; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if _, err := net.Dial("tcp", ts.addr); err == nil {
		t.Fatal("listener still accepting after shutdown")
	}
}

func TestShutdownDeadlineForcesClose(t *testing.T) {
	entered := make(chan struct{})
	release := make(chan struct{})
	// The handler ignores its context (busy, not parked), so only the
	// deadline ends the drain; it finishes a while after the deadline and
	// its late answer must not be written.
	ts := startServer(t, nil, metadataHandler(func(_ context.Context, req *api.Request) api.Response {
		close(entered)
		<-release
		return api.Reply(req.Body.ResponseKind())
	}))
	c := dial(t, ts.addr)
	send(t, c, kmsg.NewPtrMetadataRequest(), 4, 9)
	<-entered
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	go func() {
		<-ctx.Done()
		// Part of the test: the handler ends after the deadline, and its
		// late answer must not be written.
		time.Sleep(50 * time.Millisecond)
		close(release)
	}()
	if err := ts.srv.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown: %v, want deadline exceeded", err)
	}
	expectClosed(t, c)
}

// A request parked on a long wait that observes its context (a fetch's
// max.wait.ms in the purgatory) is answered as soon as shutdown begins, not
// when its wait ends.
func TestShutdownAnswersParkedWaitAtOnce(t *testing.T) {
	waits := purgatory.New[string]()
	t.Cleanup(waits.Close)
	entered := make(chan struct{})
	waitErr := make(chan error, 1)
	ts := startServer(t, nil, metadataHandler(func(ctx context.Context, req *api.Request) api.Response {
		close(entered)
		_, err := waits.Wait(ctx, []string{"never"}, 30*time.Second, func() bool { return false })
		waitErr <- err
		return api.Reply(req.Body.ResponseKind())
	}))
	c := dial(t, ts.addr)
	send(t, c, kmsg.NewPtrMetadataRequest(), 4, 9)
	<-entered
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ts.srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown with a parked request: %v, want its answer written well before the grace ends", err)
	}
	if err := <-waitErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("parked wait ended with %v, want context.Canceled", err)
	}
	if corr, _ := readResponse(t, c, false); corr != 9 {
		t.Fatalf("parked request's answer has correlation %d", corr)
	}
	expectClosed(t, c)
}

func TestMaxConnectionsWaitsForSlot(t *testing.T) {
	ts := startServer(t, func(o *Options) { o.MaxConnections = 1 })
	first := dial(t, ts.addr)
	send(t, first, kmsg.NewPtrApiVersionsRequest(), 0, 1)
	readResponse(t, first, false)
	second := dial(t, ts.addr) // completes in the kernel backlog, not served
	send(t, second, kmsg.NewPtrApiVersionsRequest(), 0, 2)
	second.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	var one [1]byte
	if _, err := second.Read(one[:]); err == nil {
		t.Fatal("second connection served above max.connections")
	}
	first.Close()
	second.SetReadDeadline(time.Now().Add(5 * time.Second))
	if corr, _ := readResponse(t, second, false); corr != 2 {
		t.Fatalf("second connection answer correlation %d", corr)
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	reg, _ := api.NewRegistry(api.BrokerRelease(), api.RegistryInfo{}, nil)
	for name, opts := range map[string]Options{
		"no registry":  {Listeners: []Listener{{Name: "PLAINTEXT", Address: "127.0.0.1:0"}}},
		"no listeners": {Registry: reg},
		"negative max": {Registry: reg, Listeners: []Listener{{Name: "P", Address: ":0"}}, MaxRequestSize: -1},
		"queued.max.request.bytes below socket.request.max.bytes": {Registry: reg, Listeners: []Listener{{Name: "P", Address: ":0"}},
			MaxRequestSize: 1 << 20, QueuedMaxRequestBytes: 1<<20 - 1},
		"negative max.connections.per.ip": {Registry: reg, Listeners: []Listener{{Name: "P", Address: ":0"}}, MaxConnectionsPerIP: -1},
		"bad override":                    {Registry: reg, Listeners: []Listener{{Name: "P", Address: ":0"}}, MaxConnectionsPerIPOverrides: "x"},
	} {
		if _, err := New(opts); err == nil {
			t.Errorf("%s: New accepted %+v", name, opts)
		}
	}
}

func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

func TestHandlerCanCloseConnection(t *testing.T) {
	ts := startServer(t, nil, metadataHandler(func(context.Context, *api.Request) api.Response {
		return api.CloseConnection(errors.New("acks=0 produce failed"))
	}))
	c := dial(t, ts.addr)
	send(t, c, kmsg.NewPtrMetadataRequest(), 4, 1)
	expectClosed(t, c)
	if got := counterValue(t, ts.srv.metrics.errors.WithLabelValues("Metadata", reasonHandler)); got != 1 {
		t.Fatalf("handler errors %v, want 1", got)
	}
}

func TestZeroResponseClosesConnection(t *testing.T) {
	ts := startServer(t, nil, metadataHandler(func(context.Context, *api.Request) api.Response {
		return api.Response{}
	}))
	c := dial(t, ts.addr)
	send(t, c, kmsg.NewPtrMetadataRequest(), 4, 1)
	expectClosed(t, c)
}

func TestIdleConnectionIsClosed(t *testing.T) {
	ts := startServer(t, func(o *Options) { o.IdleTimeout = 50 * time.Millisecond })
	c := dial(t, ts.addr)
	expectClosed(t, c)
}

func TestKIP511AnswerIsCountedAsUnsupported(t *testing.T) {
	ts := startServer(t, nil)
	c := dial(t, ts.addr)
	send(t, c, kmsg.NewPtrApiVersionsRequest(), 300, 1)
	readResponse(t, c, false)
	testutil.Eventually(t, 5*time.Second, func() bool {
		return seriesValue(t, ts.metrics, "kafka_network_requestmetrics_requests_total", "request", "ApiVersions", "version", "unsupported") == 1
	}, "requests_total{ApiVersions,unsupported} = 1")
}

func TestRunStopsWithContext(t *testing.T) {
	reg, err := api.NewRegistry(api.BrokerRelease(), api.RegistryInfo{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{
		Listeners: []Listener{{Name: "PLAINTEXT", Address: "127.0.0.1:0"}},
		Registry:  reg,
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, time.Second) }()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
}

// Byte fields of a decoded request alias its frame. Only keys whose handlers
// keep none of them (Produce, Fetch) let the connection reuse the frame's
// buffer; a SyncGroup assignment kept by a handler stays intact while later
// requests arrive on the connection.
func TestFrameBufferReusedOnlyWhereNothingIsKept(t *testing.T) {
	var kept [][]byte
	var keptMu sync.Mutex
	syncGroup := api.Handler{Key: 14, MinVersion: 0, MaxVersion: 5, Handle: func(_ context.Context, req *api.Request) api.Response {
		body := req.Body.(*kmsg.SyncGroupRequest)
		keptMu.Lock()
		kept = append(kept, body.GroupAssignment[0].MemberAssignment)
		keptMu.Unlock()
		return api.Reply(req.Body.ResponseKind())
	}}
	ts := startServer(t, nil, syncGroup)
	c := dial(t, ts.addr)
	for i := range 3 {
		req := kmsg.NewPtrSyncGroupRequest()
		req.Group, req.MemberID = "g", "m"
		a := kmsg.NewSyncGroupRequestGroupAssignment()
		a.MemberID = "m"
		a.MemberAssignment = bytes.Repeat([]byte{byte('a' + i)}, 64)
		req.GroupAssignment = append(req.GroupAssignment, a)
		send(t, c, req, 3, int32(i))
		readResponse(t, c, false)
	}
	keptMu.Lock()
	defer keptMu.Unlock()
	for i, b := range kept {
		if !bytes.Equal(b, bytes.Repeat([]byte{byte('a' + i)}, 64)) {
			t.Fatalf("assignment %d kept by the handler was overwritten by a later request: %q", i, b)
		}
	}
	if !frameReusableAfter(0) || !frameReusableAfter(1) || frameReusableAfter(14) {
		t.Fatal("frame reuse allowed for the wrong keys")
	}
}
