package main

import (
	"fmt"
	"strings"
)

// renderTLSMethod says how the TLS rows were measured.
func renderTLSMethod(b *strings.Builder, pr profile) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format+"\n", args...) }
	s := &suite{prof: pr}
	connWarm, connMeasure := s.connWindows()
	p("- TLS rows: each round, a session per system whose broker has a second listener, named SSL,")
	p("  beside PLAINTEXT (Sluice: `--override listeners=...,SSL://...`; Kafka: `bench/kafka-ref start")
	p("  --ssl-listener --config FILE`), both with the same JKS keystore from a throwaway PKI written")
	p("  into the scratch dir (tlstest: an ECDSA P-256 CA and broker certificate for 127.0.0.1), no")
	p("  client authentication. Topic creation, the warm-up and the fills go through PLAINTEXT; Kafka's")
	p("  tools reach the SSL listener with `--command-config` holding security.protocol=SSL and a")
	p("  PKCS12 truststore of the CA (hostname checked, the JVM's TLS defaults: TLS 1.3 here).")
	p("  After the usual warm-up the TLS session repeats it through SSL (%d s at full speed, acks=1,", pr.BrokerWarm)
	p("  16 partitions), so neither broker meets TLS cold in a measured run.")
	p("- New connections per second: a Go client in the suite (crypto/tls, X25519 only, no session")
	p("  cache, so every connection is a full handshake) connects, does the TLS handshake, sends")
	p("  ApiVersions v3 and reads the answer, then closes; one client one connection after another,")
	p("  then %d clients at once. First %.0f s of connections from %d clients warm the broker's", connRateWorkers, connWarm.Seconds(), connRateWorkers)
	p("  handshake path (a fresh JVM compiles it over tens of thousands of handshakes); then each")
	p("  run has 1 s of warm-up, and the connections completed in the next %.0f s", connMeasure.Seconds())
	p("  are counted (over the window's time, the last connections in flight included); any failed")
	p("  connection fails the run. Broker CPU per connection is over the %d-client window.", connRateWorkers)
	p("  These run right after the warm-ups, on an otherwise idle broker.")
	p("- The same with SCRAM-SHA-256: a second session per system where the listener named SSL is")
	p("  SASL_SSL (listener.security.protocol.map SSL:SASL_SSL, sasl.enabled.mechanisms=SCRAM-SHA-256,")
	p("  the ScramLoginModule JAAS entry); the user is created with AlterUserScramCredentials (%d", scramIterations)
	p("  iterations) through PLAINTEXT, and each connection adds SaslHandshake v1 and SaslAuthenticate")
	p("  v2 (client-first, client-final; franz-go's SCRAM client, which derives the salted password,")
	p("  4096 HMAC-SHA-256 rounds, on every connection as the Java client does) before closing.")
	p("- Produce over TLS: producer-perf-test as the produce rows (acks=all, idempotent, 1 and 16")
	p("  partitions, %d warm-up and %d measured one-second windows, CPU over the same windows) through", pr.Warm, pr.Measure)
	p("  the SSL listener. Before the 16-partition run, the same run through PLAINTEXT in the same")
	p("  session (its own topic) gives the divisor of the \"over TLS / over PLAINTEXT\" row.")
	p("- Read over TLS: %d MiB written through PLAINTEXT (acks=1, 16 partitions, to completion), then", s.tlsFillBytes()>>20)
	p("  read whole by `consumer-perf-test --num-records N` through PLAINTEXT, then again by a new")
	p("  group through SSL; MB/s over the tool's fetch time (group join excluded), broker CPU over the")
	p("  SSL read's whole tool run. Both reads come from the page cache. Sluice sends a PLAINTEXT")
	p("  fetch's log bytes with sendfile; over TLS both brokers copy them through the TLS record layer.")
}
