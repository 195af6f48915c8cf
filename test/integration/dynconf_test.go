package integration

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/testutil"
)

// servedRaw reports whether a new TCP connection to addr answers ApiVersions
// v0; the connection stays open until the test ends.
func servedRaw(t *testing.T, addr string) bool {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Write([]byte{0, 0, 0, 10, 0, 18, 0, 0, 0, 0, 0, 1, 0, 0}); err != nil {
		return false
	}
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	var head [4]byte
	_, err = c.Read(head[:])
	return err == nil
}

func alterBroker(t *testing.T, ctx context.Context, adm *kadm.Client, op kadm.IncrementalOp, key, value string, brokers ...int32) error {
	t.Helper()
	resp, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: op, Name: key, Value: ptr(value)}}, brokers...)
	if err != nil {
		return err
	}
	for _, r := range resp {
		if r.Err != nil {
			return r.Err
		}
	}
	return nil
}

// TestDynamicConnectionLimitsAndCleaner: max.connections.per.ip set on the
// running broker refuses new connections over it while the ones open stay,
// and deleting it lets them in again; log.cleaner.threads and
// log.cleaner.io.max.bytes.per.second reach the running cleaner; a key the
// node would need a restart for is refused with INVALID_REQUEST and Kafka's
// words; the dynamic values are applied again after a restart.
func TestDynamicConnectionLimitsAndCleaner(t *testing.T) {
	dir := t.TempDir()
	port := freePort(t)
	srv := startServer(t, dir, port)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := kadm.NewClient(newClient(t, srv.addr))
	if _, err := adm.BrokerMetadata(ctx); err != nil {
		t.Fatal(err)
	}

	if err := alterBroker(t, ctx, adm, kadm.SetConfig, "max.connections.per.ip", "4", 1); err != nil {
		t.Fatal(err)
	}
	refused := false
	for range 6 { // the admin client holds one or two connections already
		if !servedRaw(t, srv.addr) {
			refused = true
			break
		}
	}
	if !refused {
		t.Fatal("six more connections from one address served under max.connections.per.ip=4")
	}
	if err := alterBroker(t, ctx, adm, kadm.DeleteConfig, "max.connections.per.ip", "", 1); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, func() bool { return servedRaw(t, srv.addr) }, "a connection is served once the limit is deleted")

	if err := alterBroker(t, ctx, adm, kadm.SetConfig, "log.cleaner.threads", "2"); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, func() bool {
		return strings.Contains(srv.proc.Logs(), `msg="log cleaner reconfigured" component=cleaner threads=2`)
	}, "the cleaner runs two threads")

	err := alterBroker(t, ctx, adm, kadm.SetConfig, "num.io.threads", "4", 1)
	if err == nil || !strings.Contains(err.Error(), kerr.InvalidRequest.Message) && !strings.Contains(err.Error(), "INVALID_REQUEST") {
		t.Fatalf("num.io.threads (applied only at start-up): %v, want INVALID_REQUEST", err)
	}

	srv.stop()
	srv = startServer(t, dir, port)
	testutil.Eventually(t, 20*time.Second, func() bool {
		return strings.Contains(srv.proc.Logs(), `msg="log cleaner reconfigured" component=cleaner threads=2`)
	}, "the stored log.cleaner.threads reaches the cleaner after a restart")
}
