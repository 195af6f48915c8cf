package main

import (
	"context"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/internal/config"
)

// TestLoggerFromKeys: sluice.log.format and sluice.log.level build the
// logger; values outside text|json and Kafka's level names are refused
// naming the keys.
func TestLoggerFromKeys(t *testing.T) {
	for _, c := range []struct{ format, level, want string }{
		{"", "", ""},
		{"json", "DEBUG", ""},
		{"text", "trace", ""},
		{"xml", "", "want text or json"},
		{"json", "LOUD", "valid log levels are DEBUG, ERROR, FATAL, INFO, TRACE, WARN"},
	} {
		cfg, err := config.Parse("", map[string]string{config.SluiceLogFormat.Name(): c.format, config.SluiceLogLevel.Name(): c.level})
		if err != nil {
			t.Fatal(err)
		}
		logger, err := newLogger(cfg)
		if c.want == "" {
			if err != nil {
				t.Errorf("%q/%q: %v", c.format, c.level, err)
			}
			if c.level == "DEBUG" && !logger.Enabled(context.Background(), -4) {
				t.Errorf("level DEBUG: debug records are dropped")
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "sluice.log.format, sluice.log.level") {
			t.Errorf("%q/%q: %v, want %q", c.format, c.level, err, c.want)
		}
	}
}
