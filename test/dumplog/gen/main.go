// Command gen writes a partition log with Sluice's commitlog (several
// segments, every codec, idempotent and transactional producers) under a log
// dir and prints a JSON manifest of what it wrote, for checking the files
// with Kafka's DumpLogSegments.
//
//	go run ./test/dumplog/gen -dir /tmp/logdir > manifest.json
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"

	"github.com/sluice-io/sluice/test/dumplog"
)

func main() {
	dir := flag.String("dir", "", "log dir to write the partition directory into (required)")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "gen: -dir is required")
		os.Exit(2)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	m, err := dumplog.Generate(*dir, logger)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
