package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// connRateWorkers is how many clients open connections at once in the concurrent
// connection-rate rows (the sequential rows use one).
const connRateWorkers = 16

// The connection-rate windows and the TLS read's size are capped, so the full profile's
// TLS phase stays near half an hour: thousands of connections per window, and a read of a
// few seconds, already give steady figures. The connection warm-up is a minute in both
// profiles: a fresh JVM compiles its handshake path over tens of thousands of handshakes
// (a side run: Kafka's broker CPU per connection fell from 5.2 ms after 5 s of them to 3.4
// after 40 s and 1.7 after 70 s).
const (
	connWarmSecs       = 60
	maxConnMeasureSecs = 10
	maxTLSFillBytes    = 512 << 20
)

func (s *suite) tlsFillBytes() int64 { return min(s.prof.FillBytes, maxTLSFillBytes) }

func (s *suite) connWindows() (warm, measure time.Duration) {
	return connWarmSecs * time.Second, time.Duration(min(s.prof.Measure, maxConnMeasureSecs)) * time.Second
}

// tlsProduceSpecs are the TLS produce rows: the Java producer's default (acks=all,
// idempotent) on 1 and 16 partitions, as the plaintext acks=all rows, over the SSL listener.
func tlsProduceSpecs(clientConfig string) []produceSpec {
	return []produceSpec{
		{AcksAll: true, Partitions: 1, ClientConfig: clientConfig},
		{AcksAll: true, Partitions: 16, ClientConfig: clientConfig},
	}
}

func tlsProduceRow(sp produceSpec) row {
	return row{Key: "tls-produce-" + sp.key(), Label: "Produce throughput over TLS (listener SSL, producer-perf-test with security.protocol=SSL), " + sp.label(), Unit: "MB/s", Format: "%.1f", HigherIsBetter: true}
}

func tlsProduceCPURow(sp produceSpec) row {
	return row{Key: "cpu-tls-produce-" + sp.key(), Label: "Broker CPU per GB produced over TLS, " + sp.label(), Unit: "CPU s/GB", Format: "%.2f"}
}

func tlsOverPlainProduceRow(sp produceSpec) row {
	return row{Key: "tls-over-plain-produce-" + sp.key(), Label: "Produce throughput over TLS / over PLAINTEXT, same session, the plaintext run just before, " + sp.label(), Unit: "ratio", Format: "%.2f", HigherIsBetter: true}
}

func (s *suite) tlsConsumeRow() row {
	return row{Key: "tls-consume", Label: fmt.Sprintf("Catch-up read over TLS of %d MiB, %d partitions (consumer-perf-test with security.protocol=SSL, classic group, rate over its fetch time)", s.tlsFillBytes()>>20, catchUpPartitions), Unit: "MB/s", Format: "%.1f", HigherIsBetter: true}
}

var (
	rowTLSConsumeCPU = row{Key: "cpu-tls-consume", Label: "Broker CPU per GB read over TLS (the same read)", Unit: "CPU s/GB", Format: "%.2f"}
	rowTLSOverPlain  = row{Key: "tls-over-plain-consume", Label: "Catch-up read over TLS / over PLAINTEXT, same topic, same session, the plaintext read just before", Unit: "ratio", Format: "%.2f", HigherIsBetter: true}
)

func connRateRow(withSCRAM bool, workers int) row {
	what, key := "TLS handshake + ApiVersions", "connrate-tls"
	if withSCRAM {
		what, key = "TLS handshake + ApiVersions + SaslHandshake + SaslAuthenticate SCRAM-SHA-256 (listener SASL_SSL)", "connrate-scram"
	}
	how := "one client, one connection after another"
	if workers > 1 {
		how = fmt.Sprintf("%d clients at once, each one connection after another", workers)
	}
	return row{Key: fmt.Sprintf("%s-c%d", key, workers), Label: fmt.Sprintf("New connections per second: %s, then close; %s", what, how), Unit: "conn/s", Format: "%.0f", HigherIsBetter: true}
}

func connCPURow(withSCRAM bool) row {
	what, key := "TLS", "tls"
	if withSCRAM {
		what, key = "TLS + SCRAM-SHA-256", "scram"
	}
	return row{Key: "cpu-connrate-" + key, Label: fmt.Sprintf("Broker CPU per new connection (%s, the %d-client run)", what, connRateWorkers), Unit: "CPU ms", Format: "%.2f"}
}

// tlsPhase runs, each round, a TLS session on each system (connection rate over TLS,
// produce and consume over TLS) and then a SASL_SSL session on each (connection rate with
// SCRAM-SHA-256), alternating Sluice and Kafka.
func (s *suite) tlsPhase(ctx context.Context) {
	pki, err := writeTLSPKI(filepath.Join(s.scratch, "tls-pki"))
	if err != nil {
		s.res.note("The TLS phase did not run: %v", err)
		return
	}
	for r := 1; r <= s.prof.Rounds && ctx.Err() == nil; r++ {
		for _, sys := range []system{sysSluice, sysKafka} {
			s.tlsSession(ctx, sys, r, pki, false, s.tlsRuns)
		}
		for _, sys := range []system{sysSluice, sysKafka} {
			s.tlsSession(ctx, sys, r, pki, true, s.scramRuns)
		}
	}
}

type tlsRunsFunc func(ctx context.Context, b broker, ssl string, pki tlsPKI, sys system, round int) error

// tlsSession starts a broker with its SSL (or, with sasl, SASL_SSL) listener and runs fn
// against it after the usual warm-up, which goes through the PLAINTEXT listener.
func (s *suite) tlsSession(ctx context.Context, sys system, round int, pki tlsPKI, sasl bool, fn tlsRunsFunc) {
	phase := "tls"
	if sasl {
		phase = "tls+scram"
	}
	b, err := s.newTLSBroker(sys, pki, sasl)
	if err != nil {
		s.res.note("round %d %s %s: %v", round, sys, phase, err)
		return
	}
	s.runSession(ctx, b, round, phase, func(target) error {
		ssl, err := sslBootstrap(b)
		if err != nil {
			return err
		}
		return fn(ctx, b, ssl, pki, sys, round)
	})
}

// tlsRuns: a warm-up through SSL, the connection rate over TLS (on an otherwise idle
// broker), then the produce rows, then the fill and the two reads.
func (s *suite) tlsRuns(ctx context.Context, b broker, ssl string, pki tlsPKI, sys system, round int) error {
	conn := connRateConfig{Addr: ssl, TLS: pki.clientTLS()}
	waitCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	err := waitConnection(waitCtx, conn)
	cancel()
	if err != nil {
		return fmt.Errorf("SSL listener: %w", err)
	}
	over := tlsTarget{target: b, ssl: ssl}
	if err := s.warmTLS(ctx, b, over, pki); err != nil {
		return fmt.Errorf("warm-up over TLS: %w", err)
	}
	s.connRates(ctx, b, conn, sys, round)
	for _, sp := range tlsProduceSpecs(pki.clientConfig) {
		var plainMBps float64
		if sp.Partitions == catchUpPartitions {
			plain := sp
			plain.ClientConfig = ""
			if run, err := s.measureProduce(ctx, b, "tls-plain-"+plain.key(), plain); err != nil {
				s.res.fail(tlsOverPlainProduceRow(sp), sys, round, "plaintext run: "+err.Error())
			} else {
				plainMBps = run.Stats.RecordsPerSec * recordSize / 1e6
			}
		}
		mbps, ok := s.tlsProduceRun(ctx, b, over, sys, round, sp)
		if ok && plainMBps > 0 {
			s.res.add(tlsOverPlainProduceRow(sp), sys, round, mbps/plainMBps, load())
		}
	}
	return s.tlsReads(ctx, b, over, pki, sys, round)
}

// warmTLS is the session's warm-up again, through the SSL listener: the plaintext warm-up
// leaves a fresh JVM's TLS record path interpreted, and the first measured run would pay
// for its compilation.
func (s *suite) warmTLS(ctx context.Context, b broker, over tlsTarget, pki tlsPKI) error {
	if s.prof.BrokerWarm <= 0 {
		return nil
	}
	spec := produceSpec{Partitions: 16, ClientConfig: pki.clientConfig}
	if err := createTopic(ctx, b, "tls-warm-up", spec.Partitions); err != nil {
		return err
	}
	_, err := runProducerWindows(ctx, s.kafkaRef, over, "tls-warm-up", spec, s.prof.BrokerWarm-1, 1)
	return err
}

// tlsProduceRun is produceRun over the SSL listener: the topic is created through the
// PLAINTEXT listener, producer-perf-test writes through the SSL one.
func (s *suite) tlsProduceRun(ctx context.Context, b broker, over tlsTarget, sys system, round int, sp produceSpec) (float64, bool) {
	topic := "tls-" + sp.key()
	if err := createTopic(ctx, b, topic, sp.Partitions); err != nil {
		s.res.fail(tlsProduceRow(sp), sys, round, err.Error())
		return 0, false
	}
	run, err := runProducerWindows(ctx, s.kafkaRef, over, topic, sp, s.prof.Warm, s.prof.Measure)
	if err != nil {
		s.res.fail(tlsProduceRow(sp), sys, round, err.Error())
		return 0, false
	}
	l := load()
	mbps := run.Stats.RecordsPerSec * recordSize / 1e6
	s.res.add(tlsProduceRow(sp), sys, round, mbps, l)
	s.res.add(tlsProduceCPURow(sp), sys, round, run.CPUSeconds/(mb(run.Stats.Records)/1e3), l)
	s.log.Info("produce over TLS", "system", sys, "spec", sp.label(), "MB/s", fmt.Sprintf("%.1f", mbps), "cpu_s", run.CPUSeconds)
	return mbps, true
}

// tlsReads fills a topic through the PLAINTEXT listener (acks=1, as the catch-up fill) and
// reads all of it with consumer-perf-test twice: through PLAINTEXT, then through SSL.
func (s *suite) tlsReads(ctx context.Context, b broker, over tlsTarget, pki tlsPKI, sys system, round int) error {
	const topic = "tls-catch-up"
	if err := createTopic(ctx, b, topic, catchUpPartitions); err != nil {
		return fmt.Errorf("tls fill: %w", err)
	}
	n := s.tlsFillBytes() / recordSize
	if _, _, err := runProducerFill(ctx, s.kafkaRef, b, topic, n); err != nil {
		return fmt.Errorf("tls fill: %w", err)
	}
	plain, err := runConsumerPerf(ctx, s.kafkaRef, b.Bootstrap(), topic, fmt.Sprintf("bench-tls-plain-%d", round), n)
	if err != nil {
		s.res.fail(rowTLSOverPlain, sys, round, "plaintext read: "+err.Error())
	}
	cpu0, err := sumCPUSeconds(b.PIDs())
	if err != nil {
		return err
	}
	res, err := runConsumerPerf(ctx, s.kafkaRef, over.ssl, topic, fmt.Sprintf("bench-tls-%d", round), n, "--command-config", pki.clientConfig)
	if err != nil {
		s.res.fail(s.tlsConsumeRow(), sys, round, err.Error())
		return nil
	}
	cpu1, err := sumCPUSeconds(b.PIDs())
	if err != nil {
		return err
	}
	l := load()
	tlsMBps := mb(res.Records) / (res.FetchTimeMs / 1e3)
	s.res.add(s.tlsConsumeRow(), sys, round, tlsMBps, l)
	s.res.add(rowTLSConsumeCPU, sys, round, (cpu1-cpu0)/(mb(res.Records)/1e3), l)
	if plain.Records > 0 && plain.FetchTimeMs > 0 {
		s.res.add(rowTLSOverPlain, sys, round, tlsMBps/(mb(plain.Records)/(plain.FetchTimeMs/1e3)), l)
	}
	s.log.Info("read over TLS", "system", sys, "MB/s", fmt.Sprintf("%.1f", tlsMBps))
	return nil
}

// scramRuns: the SCRAM user created, the connection rate with SCRAM-SHA-256.
func (s *suite) scramRuns(ctx context.Context, b broker, ssl string, pki tlsPKI, sys system, round int) error {
	conn := connRateConfig{Addr: ssl, TLS: pki.clientTLS(), SCRAM: &scram.Auth{User: scramUser, Pass: scramPassword}}
	if err := addSCRAMUser(ctx, b, ssl, conn.TLS); err != nil {
		s.res.fail(connRateRow(true, 1), sys, round, err.Error())
		return nil
	}
	s.connRates(ctx, b, conn, sys, round)
	return nil
}

// connRates warms the broker's handshake path with connRateWorkers clients, then measures
// conn with one client and with connRateWorkers (a second's warm-up each).
func (s *suite) connRates(ctx context.Context, b broker, conn connRateConfig, sys system, round int) {
	warm, measure := s.connWindows()
	conn.Workers = connRateWorkers
	if err := connWindow(ctx, conn, warm, nil); err != nil {
		s.res.fail(connRateRow(conn.SCRAM != nil, 1), sys, round, "warm-up: "+err.Error())
		return
	}
	conn.Warm, conn.Measure = time.Second, measure
	for _, workers := range []int{1, connRateWorkers} {
		conn.Workers = workers
		rw := connRateRow(conn.SCRAM != nil, workers)
		run, err := runConnRate(ctx, conn, b.PIDs())
		if err != nil {
			s.res.fail(rw, sys, round, err.Error())
			continue
		}
		l := load()
		s.res.add(rw, sys, round, run.perSecond(), l)
		if workers > 1 {
			s.res.add(connCPURow(conn.SCRAM != nil), sys, round, run.cpuMsPerConn(), l)
		}
		s.log.Info("connection rate", "system", sys, "scram", conn.SCRAM != nil, "workers", workers,
			"conns", run.Conns, "per_s", fmt.Sprintf("%.0f", run.perSecond()), "cpu_ms_per_conn", fmt.Sprintf("%.2f", run.cpuMsPerConn()))
	}
}
