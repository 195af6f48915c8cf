package server

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/api"
	"github.com/sluice-io/sluice/internal/testutil"
)

// bigMetadataHandler answers Metadata with about 256 KiB of topics, so a
// few unread answers fill the socket buffers.
func bigMetadataHandler() api.Handler {
	return metadataHandler(func(_ context.Context, req *api.Request) api.Response {
		resp := req.Body.ResponseKind().(*kmsg.MetadataResponse)
		for range 256 {
			topic := kmsg.NewMetadataResponseTopic()
			name := strings.Repeat("n", 1000)
			topic.Topic = &name
			resp.Topics = append(resp.Topics, topic)
		}
		return api.Reply(resp)
	})
}

// A client that sends requests but never reads the answers fills the socket
// buffers; the write that can make no progress gives up after
// connections.max.idle.ms and the connection is closed, freeing its
// goroutines and buffers, while other connections are served throughout.
func TestClientThatNeverReadsIsClosed(t *testing.T) {
	ts := startServer(t, func(o *Options) { o.IdleTimeout = 300 * time.Millisecond }, bigMetadataHandler())
	stuck, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer stuck.Close()
	stuck.(*net.TCPConn).SetReadBuffer(4 << 10)
	writeErr := make(chan error, 1)
	go func() {
		req := kmsg.NewPtrMetadataRequest()
		req.SetVersion(4)
		wire := kmsg.NewRequestFormatter().AppendRequest(nil, req, 1)
		stuck.SetWriteDeadline(time.Now().Add(30 * time.Second))
		for {
			if _, err := stuck.Write(wire); err != nil {
				writeErr <- err
				return
			}
		}
	}()
	testutil.Eventually(t, 20*time.Second, func() bool {
		return counterValue(t, ts.srv.metrics.errors.WithLabelValues("Metadata", reasonWrite)) == 1
	}, "the connection whose client never reads was not closed for its stalled write")
	select {
	case err := <-writeErr:
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatalf("the client's writes timed out instead of failing on a closed connection: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the stuck client can still write after the server closed its connection")
	}
	other := dial(t, ts.addr)
	send(t, other, kmsg.NewPtrMetadataRequest(), 4, 9)
	if corr, _ := readResponse(t, other, false); corr != 9 {
		t.Fatalf("correlation %d, want 9", corr)
	}
	testutil.Eventually(t, 10*time.Second, func() bool { return ts.srv.mem.inUse() == 0 },
		"request memory held after the stuck connection closed: %d B", ts.srv.mem.inUse())
}
