// Command kafka-apicheck asks a Kafka-protocol broker for its ApiVersions and checks that
// franz-go's kmsg (the codec Sluice is built on) can encode and decode every version the
// broker advertises. It is how the repository's pinned Kafka release (KAFKA_VERSION) was
// chosen, and it can save the raw response bytes as a golden file.
//
// Exit status: 0 when kmsg covers every advertised version, 1 when the broker is ahead on
// some key, 2 on usage or connection errors.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// errBrokerAhead marks the measured outcome "kmsg cannot speak everything the broker does".
var errBrokerAhead = errors.New("broker advertises versions beyond kmsg")

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kafka-apicheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	bootstrap := fs.String("bootstrap", "127.0.0.1:9092", "broker address host:port")
	version := fs.Int("request-version", 3, "ApiVersions request version to send (0-4 for Kafka 4.x)")
	dumpRaw := fs.String("dump-raw", "", "write the raw response (size prefix, correlation id 1, body) to this file")
	timeout := fs.Duration("timeout", 10*time.Second, "dial and round-trip timeout")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "unexpected arguments: %v\n", fs.Args())
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	err := check(*bootstrap, int16(*version), *dumpRaw, *timeout, stdout)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errBrokerAhead):
		log.Error("apicheck failed", "bootstrap", *bootstrap, "err", err)
		return 1
	default:
		log.Error("apicheck could not run", "bootstrap", *bootstrap, "err", err)
		return 2
	}
}

func check(bootstrap string, version int16, dumpRaw string, timeout time.Duration, out io.Writer) error {
	if version < 0 {
		return fmt.Errorf("request version %d is negative", version)
	}
	ex, err := probeApiVersions(bootstrap, version, timeout)
	if err != nil {
		return err
	}
	if dumpRaw != "" {
		if err := os.WriteFile(dumpRaw, ex.Raw, 0o644); err != nil {
			return fmt.Errorf("dump raw response: %w", err)
		}
	}
	if ex.Response.ErrorCode != 0 {
		return fmt.Errorf("broker answered ApiVersions v%d with error code %d", version, ex.Response.ErrorCode)
	}
	fmt.Fprintf(out, "broker %s, ApiVersions v%d, %d keys\n", bootstrap, version, len(ex.Response.ApiKeys))
	ahead, err := writeTable(out, compareWithKmsg(ex.Response.ApiKeys))
	if err != nil {
		return err
	}
	if ahead > 0 {
		return fmt.Errorf("%w: %d keys", errBrokerAhead, ahead)
	}
	fmt.Fprintln(out, "PASS: kmsg covers every advertised version")
	return nil
}
