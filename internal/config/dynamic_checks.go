package config

import (
	"errors"
	"strconv"
	"strings"
)

// checkLiveValues applies the checks Kafka makes when a dynamic broker config changes one of
// the keys a running Sluice node applies live beyond their ConfigDef ranges (the components'
// validateReconfiguration and KafkaConfig's requirements), in Kafka's words. Only keys set in
// a dynamic layer are checked: a static file is Load's to check.
func (c *Config) checkLiveValues() error {
	dyn := func(k Key) bool {
		_, b := c.dynBroker[k.Name()]
		_, d := c.dynDefault[k.Name()]
		return b || d
	}
	threads := int64(c.Int(LogCleanerThreads))
	switch {
	case dyn(LogCleanerThreads) && threads < 1:
		// Kafka 4.4 answers "/ by zero" here (it divides the dedupe buffer by the threads
		// before LogCleaner.validateReconfiguration's own check); Sluice gives that check's words.
		return errors.New("Log cleaner threads should be at least 1")
	case (dyn(LogCleanerThreads) || dyn(LogCleanerDedupeBufferSize)) && c.Long(LogCleanerDedupeBufferSize)/threads < 1024*1024:
		return errors.New("requirement failed: log.cleaner.dedupe.buffer.size must be at least 1MB per cleaner thread.")
	case (dyn(MaxConnectionsPerIP) || dyn(MaxConnectionsPerIPOverrides)) && c.Int(MaxConnectionsPerIP) == 0 &&
		strings.TrimSpace(c.String(MaxConnectionsPerIPOverrides)) == "":
		return errors.New("requirement failed: max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides property is set.")
	case dyn(MaxConnectionsPerIPOverrides):
		if err := checkPerIPOverrides(c.String(MaxConnectionsPerIPOverrides)); err != nil {
			return err
		}
	}
	return nil
}

// checkPerIPOverrides parses max.connections.per.ip.overrides as Kafka's
// ConnectionQuotas does ("host:count,...", split at each entry's last colon); host names are
// resolved by the broker when it applies the value.
func checkPerIPOverrides(s string) error {
	for _, entry := range strings.Split(s, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		i := strings.LastIndexByte(entry, ':')
		bad := i <= 0
		if !bad {
			n, err := strconv.Atoi(strings.TrimSpace(entry[i+1:]))
			bad = err != nil || n < 0
		}
		if bad {
			// Kafka's message carries Java's exception text after the colon.
			return errors.New("Error parsing configuration property 'max.connections.per.ip.overrides': " + strconv.Quote(entry) + " is not host:count")
		}
	}
	return nil
}

// KafkaMessage is the error in ConfigDef's words, as Kafka answers an AlterConfigs it refuses
// ("Invalid value abc for configuration log.retention.ms: Not a number of type LONG").
func (e *InvalidValueError) KafkaMessage() string {
	reason := e.Reason
	for _, t := range []string{"int", "long", "short", "double"} {
		reason = strings.Replace(reason, "of type "+t, "of type "+strings.ToUpper(t), 1)
	}
	if reason != "" {
		reason = strings.ToUpper(reason[:1]) + reason[1:]
	}
	return "Invalid value " + e.Value + " for configuration " + e.Key + ": " + reason
}

// inKafkaWords turns a dynamic update's value errors into Kafka's message for the first
// (Kafka stops at the first); other errors pass unchanged.
func inKafkaWords(err error) error {
	var iv *InvalidValueError
	if errors.As(err, &iv) {
		return errors.New(iv.KafkaMessage())
	}
	return err
}
