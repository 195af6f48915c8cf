package server

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/api"
	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/fetchwire"
	"github.com/sluice-io/sluice/internal/purgatory"
	"github.com/sluice-io/sluice/internal/testutil"
)

const (
	requestsTotal = "kafka_network_requestmetrics_requests_total"
	errorsTotal   = "kafka_network_requestmetrics_errors_total"
)

// waitSeries waits until name{labels} reaches want: a request is counted
// once its response is written, which may be just after the client reads it.
func waitSeries(t *testing.T, reg *prometheus.Registry, want float64, name string, labels ...string) {
	t.Helper()
	testutil.Eventually(t, 5*time.Second, func() bool { return seriesValue(t, reg, name, labels...) == want },
		"%s%v = %v (now %v)", name, labels, want, seriesValue(t, reg, name, labels...))
}

func TestProduceErrorResponseCountsEveryErrorCode(t *testing.T) {
	ts := startServer(t, nil, api.Handler{Key: 0, MinVersion: 3, MaxVersion: 11,
		Handle: func(_ context.Context, req *api.Request) api.Response {
			resp := req.Body.ResponseKind().(*kmsg.ProduceResponse)
			topic := kmsg.NewProduceResponseTopic()
			topic.Topic = "t"
			for p, code := range []int16{0, kerr.NotLeaderForPartition.Code, 0} {
				part := kmsg.NewProduceResponseTopicPartition()
				part.Partition, part.ErrorCode = int32(p), code
				topic.Partitions = append(topic.Partitions, part)
			}
			resp.Topics = append(resp.Topics, topic)
			return api.Reply(resp)
		}})
	c := dial(t, ts.addr)
	req := kmsg.NewPtrProduceRequest()
	req.Acks = 1
	send(t, c, req, 9, 1)
	readResponse(t, c, true)

	waitSeries(t, ts.metrics, 1, requestsTotal, "request", "Produce", "version", "9")
	if got := seriesValue(t, ts.metrics, errorsTotal, "request", "Produce", "error", "NOT_LEADER_OR_FOLLOWER"); got != 1 {
		t.Errorf("errors_total{Produce,NOT_LEADER_OR_FOLLOWER} = %v, want 1", got)
	}
	if got := seriesValue(t, ts.metrics, errorsTotal, "request", "Produce", "error", "NONE"); got != 2 {
		t.Errorf("errors_total{Produce,NONE} = %v, want 2 (Kafka counts NONE too)", got)
	}
	for _, name := range timeSeries {
		if got := seriesValue(t, ts.metrics, name, "request", "Produce"); got != 1 {
			t.Errorf("%s{Produce} count = %v, want 1", name, got)
		}
	}
	if got := seriesValue(t, ts.metrics, "kafka_network_requestmetrics_requestbytes", "request", "Produce"); got != 1 {
		t.Errorf("requestbytes{Produce} count = %v, want 1", got)
	}
}

// fetchHandler answers every Fetch with a streamed body whose top-level code
// is NONE and whose two partitions carry NONE and OFFSET_OUT_OF_RANGE,
// after wait.
func fetchHandler(t *testing.T, wait func(ctx context.Context)) api.Handler {
	return api.Handler{Key: 1, MinVersion: fetchwire.MinVersion, MaxVersion: fetchwire.MaxVersion,
		Handle: func(ctx context.Context, req *api.Request) api.Response {
			if wait != nil {
				wait(ctx)
			}
			enc, err := fetchwire.Encode(&fetchwire.Response{Topics: []fetchwire.Topic{{Name: "t", Partitions: []fetchwire.Partition{
				{Partition: 0}, {Partition: 1, ErrorCode: kerr.OffsetOutOfRange.Code},
			}}}}, req.Header.APIVersion)
			if err != nil {
				t.Error(err)
				return api.CloseConnection(err)
			}
			return api.Stream(enc)
		}}
}

func sendFetch(t *testing.T, addr string, version int16, replica int32) {
	t.Helper()
	c := dial(t, addr)
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = replica
	req.ReplicaState.ID = replica
	send(t, c, req, version, 1)
	readResponse(t, c, version >= 12)
}

func TestFetchIsNamedFollowerOrConsumerByReplicaID(t *testing.T) {
	ts := startServer(t, nil, fetchHandler(t, nil))
	sendFetch(t, ts.addr, 12, 2)  // a follower: replica id >= 0
	sendFetch(t, ts.addr, 15, 3)  // v15+: the id is in ReplicaState
	sendFetch(t, ts.addr, 15, -1) // a consumer

	// Kafka counts a Fetch under Fetch and under its kind.
	waitSeries(t, ts.metrics, 2, requestsTotal, "request", "Fetch", "version", "15")
	waitSeries(t, ts.metrics, 1, requestsTotal, "request", "Fetch", "version", "12")
	for _, want := range []struct {
		request, version string
		n                float64
	}{
		{"FetchFollower", "12", 1}, {"FetchFollower", "15", 1}, {"FetchConsumer", "15", 1}, {"FetchConsumer", "12", 0},
	} {
		if got := seriesValue(t, ts.metrics, requestsTotal, "request", want.request, "version", want.version); got != want.n {
			t.Errorf("requests_total{%s,%s} = %v, want %v", want.request, want.version, got, want.n)
		}
	}
	if got := seriesValue(t, ts.metrics, "kafka_network_requestmetrics_totaltimems", "request", "FetchFollower"); got != 2 {
		t.Errorf("totaltimems{FetchFollower} count = %v, want 2", got)
	}
	// Errors are counted under Fetch only, as Kafka's updateErrorMetrics.
	if got := seriesValue(t, ts.metrics, errorsTotal, "request", "Fetch", "error", "OFFSET_OUT_OF_RANGE"); got != 3 {
		t.Errorf("errors_total{Fetch,OFFSET_OUT_OF_RANGE} = %v, want 3", got)
	}
	if got := seriesValue(t, ts.metrics, errorsTotal, "request", "Fetch", "error", "NONE"); got != 6 {
		t.Errorf("errors_total{Fetch,NONE} = %v, want 6 (top level and one partition, three times)", got)
	}
	if m := findSeries(t, ts.metrics, errorsTotal, "request", "FetchConsumer"); m != nil {
		t.Errorf("errors counted under FetchConsumer: %v", m)
	}
}

func TestLongPollFetchRecordsRemoteTime(t *testing.T) {
	clk := clock.NewManual(time.Unix(1_700_000_000, 0))
	waits := purgatory.New[string](purgatory.WithClock(clk))
	t.Cleanup(waits.Close)
	ts := startServer(t, func(o *Options) { o.Clock = clk }, fetchHandler(t, func(ctx context.Context) {
		waits.Wait(ctx, []string{"t-0"}, 500*time.Millisecond, func() bool { return false })
	}))
	done := make(chan struct{})
	go func() {
		defer close(done)
		sendFetch(t, ts.addr, 12, -1)
	}()
	testutil.Eventually(t, 5*time.Second, func() bool { return waits.Waiting() == 1 }, "fetch parked")
	clk.Advance(500 * time.Millisecond)
	<-done
	waitSeries(t, ts.metrics, 1, "kafka_network_requestmetrics_totaltimems", "request", "FetchConsumer")

	for _, request := range []string{"Fetch", "FetchConsumer"} {
		remote := findSeries(t, ts.metrics, "kafka_network_requestmetrics_remotetimems", "request", request).GetHistogram()
		if remote.GetSampleCount() != 1 || remote.GetSampleSum() != 500 {
			t.Errorf("remotetimems{%s}: count %d sum %v, want 1 and 500", request, remote.GetSampleCount(), remote.GetSampleSum())
		}
		for _, b := range remote.GetBucket() {
			if want := uint64(0); b.GetUpperBound() >= 500 {
				want = 1
				if b.GetCumulativeCount() != want {
					t.Errorf("remotetimems{%s} bucket le=%v = %d, want %d", request, b.GetUpperBound(), b.GetCumulativeCount(), want)
				}
			} else if b.GetCumulativeCount() != want {
				t.Errorf("remotetimems{%s} bucket le=%v = %d, want %d", request, b.GetUpperBound(), b.GetCumulativeCount(), want)
			}
		}
		local := findSeries(t, ts.metrics, "kafka_network_requestmetrics_localtimems", "request", request).GetHistogram()
		total := findSeries(t, ts.metrics, "kafka_network_requestmetrics_totaltimems", "request", request).GetHistogram()
		// The manual clock moved only while the fetch was parked.
		if local.GetSampleSum() != 0 || total.GetSampleSum() != 500 {
			t.Errorf("%s: localtimems sum %v, totaltimems sum %v; want 0 and 500", request, local.GetSampleSum(), total.GetSampleSum())
		}
	}
}

func TestConnectionCountAndCreation(t *testing.T) {
	ts := startServer(t, nil)
	const count, created = "kafka_server_socketservermetrics_connection_count", "kafka_server_socketservermetrics_connection_creation_total"
	c := dial(t, ts.addr)
	send(t, c, kmsg.NewPtrApiVersionsRequest(), 3, 1)
	readResponse(t, c, false)
	if got := seriesValue(t, ts.metrics, count, "listener", "PLAINTEXT"); got != 1 {
		t.Errorf("connection_count = %v, want 1", got)
	}
	if got := seriesValue(t, ts.metrics, created, "listener", "PLAINTEXT"); got != 1 {
		t.Errorf("connection_creation_total = %v, want 1", got)
	}
	testutil.Eventually(t, 5*time.Second, func() bool {
		return seriesValue(t, ts.metrics, "kafka_server_socketservermetrics_outgoing_byte_total", "listener", "PLAINTEXT") > 0
	}, "outgoing_byte_total > 0")
	c.Close()
	waitSeries(t, ts.metrics, 0, count, "listener", "PLAINTEXT")
	if got := seriesValue(t, ts.metrics, created, "listener", "PLAINTEXT"); got != 1 {
		t.Errorf("connection_creation_total after close = %v, want 1", got)
	}
}

func TestServersSharingKafkaMetricsCountTogether(t *testing.T) {
	shared := prometheus.NewRegistry()
	broker := startServer(t, func(o *Options) { o.KafkaMetrics = shared })
	controller := startServer(t, func(o *Options) {
		o.KafkaMetrics = shared
		o.Listeners = []Listener{{Name: "CONTROLLER", Address: "127.0.0.1:0"}}
	})
	for _, addr := range []string{broker.addr, controller.addr} {
		c := dial(t, addr)
		send(t, c, kmsg.NewPtrApiVersionsRequest(), 3, 1)
		readResponse(t, c, false)
	}
	waitSeries(t, shared, 2, requestsTotal, "request", "ApiVersions", "version", "3")
	for _, listener := range []string{"PLAINTEXT", "CONTROLLER"} {
		if got := seriesValue(t, shared, "kafka_server_socketservermetrics_connection_creation_total", "listener", listener); got != 1 {
			t.Errorf("connection_creation_total{%s} = %v, want 1", listener, got)
		}
	}
	// The servers' own registries keep only the sluice_* series.
	if m := findSeries(t, broker.metrics, requestsTotal); m != nil {
		t.Errorf("request series registered on Metrics too: %v", m)
	}
}
