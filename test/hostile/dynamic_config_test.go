package hostile

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/testbin"
	"github.com/sluice-io/sluice/internal/testutil"
)

// TestDynamicBrokerConfigNotAppliedIsRefused: a dynamic change of
// listeners (per broker and as the cluster default, through
// IncrementalAlterConfigs and AlterConfigs) was accepted, reported as set
// and never applied; it is refused with Kafka's INVALID_REQUEST naming the
// key, and the broker still reports its static listeners. A password key
// is refused without echoing its value. log.retention.ms, which a running
// node applies, is accepted and deletes records its new value expires.
func TestDynamicBrokerConfigNotAppliedIsRefused(t *testing.T) {
	srv := testbin.StartServer(t, binaryPath, testbin.ServerConfig{DataDir: t.TempDir(),
		Overrides: []string{"log.retention.check.interval.ms=100"}})
	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	listeners := []kadm.AlterConfig{{Name: "listeners", Value: kadm.StringPtr("PLAINTEXT://127.0.0.1:1,CONTROLLER://127.0.0.1:2")}}
	for _, tc := range []struct {
		how     string
		alter   func() (kadm.AlterConfigsResponses, error)
		message string
	}{
		{"IncrementalAlterConfigs, broker 1", func() (kadm.AlterConfigsResponses, error) { return adm.AlterBrokerConfigs(ctx, listeners, 1) },
			"Cannot update these configs dynamically, Sluice does not apply them without a restart: [listeners]"},
		{"AlterConfigs, broker 1", func() (kadm.AlterConfigsResponses, error) { return adm.AlterBrokerConfigsState(ctx, listeners, 1) },
			"Cannot update these configs dynamically, Sluice does not apply them without a restart: [listeners]"},
		{"IncrementalAlterConfigs, cluster default", func() (kadm.AlterConfigsResponses, error) { return adm.AlterBrokerConfigs(ctx, listeners) },
			"Cannot update these configs at default cluster level, broker id must be specified: [listeners]"},
	} {
		assertRefused(t, tc.how, tc.message, tc.alter)
	}
	secret := "hostile-secret-dynamic-jaas-61b0e4"
	assertRefused(t, "a dynamic sasl.jaas.config",
		"Cannot update these configs dynamically, Sluice does not apply them without a restart: [sasl.jaas.config]",
		func() (kadm.AlterConfigsResponses, error) {
			return adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Name: "sasl.jaas.config", Value: &secret}}, 1)
		})
	resp := describeBroker(t, srv.Addr(), "1")
	for _, c := range resp.Resources[0].Configs {
		if c.Name == "listeners" && (c.Source != kmsg.ConfigSourceStaticBrokerConfig || c.Value == nil || !strings.Contains(*c.Value, srv.Addr())) {
			t.Errorf("listeners after the refusals: %v from %s, want the static %s", deref(c.Value), c.Source, srv.Addr())
		}
	}
	if strings.Contains(string(resp.AppendTo(nil)), secret) {
		t.Error("DescribeConfigs shows the refused sasl.jaas.config")
	}

	// Records an hour old outlive the default retention (7 days), not 60 s.
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "aged"); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	for i := range 3 {
		r := &kgo.Record{Topic: "aged", Value: []byte{byte('a' + i)}, Timestamp: old}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	if start := startOffset(t, ctx, adm, "aged"); start != 0 {
		t.Fatalf("log start offset %d before the change, want 0", start)
	}
	retention := []kadm.AlterConfig{{Name: "log.retention.ms", Value: kadm.StringPtr("60000")}}
	if res, err := adm.AlterBrokerConfigs(ctx, retention, 1); err != nil || res[0].Err != nil {
		t.Fatalf("log.retention.ms refused: %v %+v", err, res)
	}
	testutil.Eventually(t, 20*time.Second, func() bool { return startOffset(t, ctx, adm, "aged") == 3 },
		"the records an hour old are not deleted after log.retention.ms=60000")
}

func assertRefused(t *testing.T, how, message string, alter func() (kadm.AlterConfigsResponses, error)) {
	t.Helper()
	res, err := alter()
	if err != nil {
		t.Fatalf("%s: %v", how, err)
	}
	if len(res) != 1 || !errors.Is(res[0].Err, kerr.InvalidRequest) || res[0].ErrMessage != message {
		t.Errorf("%s: %+v, want INVALID_REQUEST %q", how, res, message)
	}
}

func startOffset(t *testing.T, ctx context.Context, adm *kadm.Client, topic string) int64 {
	t.Helper()
	offsets, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		t.Fatalf("list start offsets: %v", err)
	}
	o, ok := offsets.Lookup(topic, 0)
	if !ok || o.Err != nil {
		t.Fatalf("start offset of %s-0: %+v", topic, o)
	}
	return o.Offset
}

func deref(s *string) string {
	if s == nil {
		return "<null>"
	}
	return *s
}
