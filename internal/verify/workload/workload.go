// Package workload drives the clients of `sluice verify` and records what
// they were told in a history (internal/verify/history) for the checker.
//
// Queue is Jepsen's Kafka queue workload: idempotent acks=all producers
// append unique values round-robin to the topic's partitions while the
// members of one consumer group read them back and commit. Group adds
// churn to it: members join, leave cleanly and are killed (their
// connections cut, so the coordinator times their session out as it
// would a killed process's), half of them on the classic protocol and
// half on KIP-848's. FinalRead reads every partition from the log start
// to its high watermark once the run is over, so the checker can tell a
// lost acknowledged write from one nobody polled.
//
// Every send ends in exactly one of Ack, Fail or Info: Fail only when the
// value definitely was not written (Classify), Info whenever that is not
// known.
package workload

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/clock"
)

// Config shapes a workload run.
type Config struct {
	Brokers []string
	Topic   string
	// Partitions is the topic's partition count; default 6.
	Partitions int32
	// ReplicationFactor is used by CreateTopic; default 3, capped at the
	// number of brokers.
	ReplicationFactor int16
	// MinInsyncReplicas is the topic's min.insync.replicas; 0 leaves the
	// broker's default.
	MinInsyncReplicas int
	// Producers is the number of producers; default 2.
	Producers int
	// Consumers is the number of group members (Group: at the start);
	// default 2.
	Consumers int
	// Rate is sends per second over all producers; 0 means 200.
	Rate int
	// Group is the consumer group's id; default "verify-<topic>".
	Group string
	// ClientOpts are added to every client (TLS, SASL, ...).
	ClientOpts []kgo.Opt
	Log        *slog.Logger

	// Seed drives the Group workload's churn schedule; 0 means 1.
	Seed int64
	// ChurnInterval is the mean time between membership changes in
	// Group; default 3 s.
	ChurnInterval time.Duration
	// SessionTimeout is the classic members' session.timeout.ms; default
	// 10 s (a killed member is noticed that long after). KIP-848 members
	// use the broker's group.consumer.session.timeout.ms.
	SessionTimeout time.Duration
	// DeliveryTimeout bounds a record's time in the producer before kgo
	// fails it (its outcome is then unknown); default 30 s.
	DeliveryTimeout time.Duration
	// DrainTimeout bounds the wait for outstanding sends once the run is
	// over; default 30 s.
	DrainTimeout time.Duration
	// Clock times latencies and paces the producers; default the real
	// clock. It should be the one the Recorder was given.
	Clock clock.Clock
}

func (c Config) withDefaults() Config {
	if c.Partitions <= 0 {
		c.Partitions = 6
	}
	if c.ReplicationFactor <= 0 {
		c.ReplicationFactor = 3
	}
	if c.Producers <= 0 {
		c.Producers = 2
	}
	if c.Consumers <= 0 {
		c.Consumers = 2
	}
	if c.Rate <= 0 {
		c.Rate = 200
	}
	if c.Group == "" {
		c.Group = "verify-" + c.Topic
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.ChurnInterval <= 0 {
		c.ChurnInterval = 3 * time.Second
	}
	if c.SessionTimeout <= 0 {
		c.SessionTimeout = 10 * time.Second
	}
	if c.DeliveryTimeout <= 0 {
		c.DeliveryTimeout = 30 * time.Second
	}
	if c.DrainTimeout <= 0 {
		c.DrainTimeout = 30 * time.Second
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	return c
}

func (c Config) validate() error {
	if len(c.Brokers) == 0 {
		return fmt.Errorf("workload: no brokers")
	}
	if c.Topic == "" {
		return fmt.Errorf("workload: no topic")
	}
	return nil
}

// NewClient is a franz-go client for cfg's brokers with cfg.ClientOpts,
// kgo's warnings logged to cfg.Log, and opts.
func NewClient(cfg Config, opts ...kgo.Opt) (*kgo.Client, error) {
	cfg = cfg.withDefaults()
	all := []kgo.Opt{kgo.SeedBrokers(cfg.Brokers...), kgo.WithLogger(kgoLogger{cfg.Log})}
	all = append(all, cfg.ClientOpts...)
	all = append(all, opts...)
	cl, err := kgo.NewClient(all...)
	if err != nil {
		return nil, fmt.Errorf("workload: new client: %w", err)
	}
	return cl, nil
}

// kgoLogger passes kgo's warnings and errors to slog; its info and debug
// lines are too many for a run's log.
type kgoLogger struct{ l *slog.Logger }

func (k kgoLogger) Level() kgo.LogLevel { return kgo.LogLevelWarn }

func (k kgoLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	lv := slog.LevelWarn
	if level == kgo.LogLevelError {
		lv = slog.LevelError
	}
	k.l.Log(context.Background(), lv, "kgo: "+msg, keyvals...)
}
