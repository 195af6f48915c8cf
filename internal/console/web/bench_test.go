package web

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/testbin"
)

// benchPartitions is the partition count of the topic the render
// benchmarks draw (issue 18: a topic with 1,000 partitions).
const benchPartitions = 1000

// BenchmarkRender is the time to serve a console page end to end, as a
// browser waits for it: the Kafka requests to a real sluice process (a
// child process, so the server's own work is not in allocs/op), the
// template and the write, for the topics list (the 1,000-partition topic
// and 20 small ones) and the 1,000-partition topic's page.
//
//	go test -run '^$' -bench Render -benchtime 20x ./internal/console/web
func BenchmarkRender(b *testing.B) {
	h, cookie := benchConsole(b)
	for _, bc := range []struct{ name, path string }{
		{"TopicsList", "/topics"},
		{"Topic1000Partitions", "/topics/wide"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			size := 0
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodGet, bc.path, nil)
				req.AddCookie(cookie)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("GET %s: %d\n%s", bc.path, rec.Code, rec.Body.String())
				}
				size = rec.Body.Len()
			}
			b.ReportMetric(float64(size), "page-bytes")
		})
	}
}

// benchConsole starts a sluice process holding the topic "wide" (1,000
// partitions, one record each) and 20 topics of one partition, and a
// console of it; it returns the handler and a session cookie.
func benchConsole(b *testing.B) (http.Handler, *http.Cookie) {
	b.Helper()
	srv := testbin.StartServer(b, testbin.Build(b), testbin.ServerConfig{DataDir: b.TempDir()})
	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	benchTopic(ctx, b, kadm.NewClient(cl), "wide", benchPartitions)
	for i := range 20 {
		benchTopic(ctx, b, kadm.NewClient(cl), fmt.Sprintf("small-%02d", i), 1)
	}
	recs := make([]*kgo.Record, 0, benchPartitions)
	for p := range int32(benchPartitions) {
		recs = append(recs, &kgo.Record{Topic: "wide", Partition: p, Value: []byte("v")})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		b.Fatalf("produce: %v", err)
	}
	c, err := New(Options{Bootstrap: srv.Addr(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	rec := httptest.NewRecorder()
	c.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	cookies := rec.Result().Cookies()
	if rec.Code != http.StatusOK || len(cookies) == 0 {
		b.Fatalf("first page: %d, %d cookies", rec.Code, len(cookies))
	}
	return c.Handler(), cookies[0]
}

// benchTopic creates topic and waits until its partitions have leaders.
func benchTopic(ctx context.Context, b *testing.B, adm *kadm.Client, topic string, partitions int32) {
	b.Helper()
	resp, err := adm.CreateTopic(ctx, partitions, 1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		b.Fatalf("create %s: %v", topic, err)
	}
	for {
		md, err := adm.Metadata(ctx, topic)
		if err == nil && len(md.Topics[topic].Partitions) == int(partitions) && md.Topics[topic].Err == nil {
			led := true
			for _, p := range md.Topics[topic].Partitions {
				led = led && p.Leader >= 0
			}
			if led {
				return
			}
		}
		select {
		case <-ctx.Done():
			b.Fatalf("topic %s not led: %v", topic, ctx.Err())
		case <-time.After(50 * time.Millisecond): // poll interval
		}
	}
}
