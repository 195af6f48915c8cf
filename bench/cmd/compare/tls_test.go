package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sasl/scram"
)

func TestTLSProducerArgsCarryTheClientConfig(t *testing.T) {
	sp := tlsProduceSpecs("/tmp/client-ssl.properties")[1]
	joined := strings.Join(windowedProducerArgs("127.0.0.1:9093", "tls-acksall-p16", sp), " ")
	if !strings.Contains(joined, "--command-config /tmp/client-ssl.properties --command-property acks=all enable.idempotence=true") {
		t.Fatalf("args %q: --command-config must come before --command-property, which takes what follows it", joined)
	}
	if sp.Partitions != 16 || !sp.AcksAll {
		t.Fatalf("the TLS rows are acks=all like the plaintext rows: %+v", sp)
	}
}

func TestTLSRowsAreDistinct(t *testing.T) {
	s := &suite{prof: profile{FillBytes: 256 << 20}}
	var keys []string
	for _, sp := range tlsProduceSpecs("f") {
		keys = append(keys, tlsProduceRow(sp).Key, tlsProduceCPURow(sp).Key, tlsOverPlainProduceRow(sp).Key, produceRow(sp).Key)
	}
	keys = append(keys, s.tlsConsumeRow().Key, rowTLSConsumeCPU.Key, rowTLSOverPlain.Key, s.consumeRow().Key)
	for _, sasl := range []bool{false, true} {
		keys = append(keys, connRateRow(sasl, 1).Key, connRateRow(sasl, connRateWorkers).Key, connCPURow(sasl).Key)
	}
	sorted := slices.Clone(keys)
	slices.Sort(sorted)
	if len(slices.Compact(sorted)) != len(keys) {
		t.Fatalf("duplicate row keys: %v", keys)
	}
	if !strings.Contains(connRateRow(true, 1).Label, "SCRAM-SHA-256") || strings.Contains(connRateRow(false, 1).Label, "SCRAM") {
		t.Fatalf("labels must say whether SCRAM ran: %q / %q", connRateRow(true, 1).Label, connRateRow(false, 1).Label)
	}
}

func TestBrokerSettingsMapTheSSLListener(t *testing.T) {
	p := tlsPKI{keystore: "/k.jks"}
	plain := p.brokerSettings(false)
	if !slices.Contains(plain, "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SSL:SSL") || slices.ContainsFunc(plain, func(s string) bool { return strings.HasPrefix(s, "sasl.") }) {
		t.Fatalf("SSL settings: %v", plain)
	}
	sasl := p.brokerSettings(true)
	for _, want := range []string{"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SSL:SASL_SSL", "sasl.enabled.mechanisms=SCRAM-SHA-256", "ssl.keystore.location=/k.jks"} {
		if !slices.Contains(sasl, want) {
			t.Errorf("SASL_SSL settings lack %q: %v", want, sasl)
		}
	}
	// Kafka reads the file top to bottom: the map must come after nothing that resets it.
	if !strings.HasPrefix(sasl[len(sasl)-1], "listener.security.protocol.map=") {
		t.Errorf("the protocol map is not last: %v", sasl)
	}
}

// TestConnRateLive starts Sluice from SLUICE_COMPARE_BIN (skipped without it) with its
// listener named SSL as SASL_SSL, creates the SCRAM user and runs short connection-rate
// windows with and without SCRAM against it (a wrong password must fail).
func TestConnRateLive(t *testing.T) {
	bin := os.Getenv("SLUICE_COMPARE_BIN")
	if bin == "" {
		t.Skip("SLUICE_COMPARE_BIN names the sluice binary to start")
	}
	dir := t.TempDir()
	pki, err := writeTLSPKI(filepath.Join(dir, "pki"))
	if err != nil {
		t.Fatal(err)
	}
	s := &suite{sluiceBin: bin, scratch: dir}
	b, err := s.newTLSBroker(sysSluice, pki, true)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := b.Close(); err != nil {
			t.Error(err)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := b.Start(ctx); err != nil {
		t.Fatal(err)
	}
	ssl, err := sslBootstrap(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := addSCRAMUser(ctx, b, ssl, pki.clientTLS()); err != nil {
		t.Fatal(err)
	}
	cfg := connRateConfig{Addr: ssl, TLS: pki.clientTLS(), SCRAM: &scram.Auth{User: scramUser, Pass: scramPassword},
		Workers: 4, Warm: 200 * time.Millisecond, Measure: time.Second}
	run, err := runConnRate(ctx, cfg, b.PIDs())
	if err != nil {
		t.Fatal(err)
	}
	if run.Conns < 1 || run.perSecond() <= 0 {
		t.Fatalf("run %+v", run)
	}
	t.Logf("%d connections, %.0f/s, %.2f broker CPU ms each", run.Conns, run.perSecond(), run.cpuMsPerConn())
	cfg.SCRAM = &scram.Auth{User: scramUser, Pass: "wrong"}
	if err := oneConnection(ctx, cfg, "wrong"); err == nil || !strings.Contains(err.Error(), "SaslAuthenticate") {
		t.Fatalf("a wrong password: %v", err)
	}
}
