package workload

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/clock"
)

// CreateTopic creates cfg.Topic with cfg.Partitions partitions (an
// existing topic with that many is fine) and waits until every partition
// has a leader. The replication factor is capped at the number of brokers.
func CreateTopic(ctx context.Context, cfg Config) error {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return err
	}
	cl, err := NewClient(cfg)
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	for {
		last := createOnce(ctx, adm, cfg)
		if last == nil {
			break
		}
		if !retryable(last) {
			return last
		}
		cfg.Log.Debug("create topic: retrying", "topic", cfg.Topic, "err", last)
		if err := sleep(ctx, cfg.Clock, 200*time.Millisecond); err != nil {
			return fmt.Errorf("creating topic %s: %w (last error: %v)", cfg.Topic, err, last)
		}
	}
	return awaitLeaders(ctx, adm, cfg)
}

func createOnce(ctx context.Context, adm *kadm.Client, cfg Config) error {
	brokers, err := adm.ListBrokers(ctx)
	if err != nil {
		return fmt.Errorf("listing brokers: %w", err)
	}
	rf := cfg.ReplicationFactor
	if n := int16(len(brokers)); n > 0 && rf > n {
		rf = n
	}
	var configs map[string]*string
	if cfg.MinInsyncReplicas > 0 {
		v := strconv.Itoa(cfg.MinInsyncReplicas)
		configs = map[string]*string{"min.insync.replicas": &v}
	}
	resp, err := adm.CreateTopic(ctx, cfg.Partitions, rf, configs, cfg.Topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("creating topic %s: %w", cfg.Topic, err)
	}
	return nil
}

// awaitLeaders waits until the topic's metadata lists cfg.Partitions
// partitions, each with a leader.
func awaitLeaders(ctx context.Context, adm *kadm.Client, cfg Config) error {
	var last error
	for {
		last = leadersReady(ctx, adm, cfg)
		if last == nil {
			return nil
		}
		var fatal fatalErr
		if errors.As(last, &fatal) {
			return fatal.error
		}
		if err := sleep(ctx, cfg.Clock, 100*time.Millisecond); err != nil {
			return fmt.Errorf("waiting for leaders of %s: %w (last: %v)", cfg.Topic, err, last)
		}
	}
}

type fatalErr struct{ error }

func leadersReady(ctx context.Context, adm *kadm.Client, cfg Config) error {
	md, err := adm.Metadata(ctx, cfg.Topic)
	if err != nil {
		return err
	}
	td, ok := md.Topics[cfg.Topic]
	if !ok || td.Err != nil {
		return fmt.Errorf("topic %s not in metadata: %v", cfg.Topic, td.Err)
	}
	if n := int32(len(td.Partitions)); n > cfg.Partitions {
		return fatalErr{fmt.Errorf("topic %s exists with %d partitions, want %d", cfg.Topic, n, cfg.Partitions)}
	}
	for p := range cfg.Partitions {
		pd, ok := td.Partitions[p]
		if !ok || pd.Err != nil || pd.Leader < 0 {
			return fmt.Errorf("partition %s/%d has no leader yet", cfg.Topic, p)
		}
	}
	return nil
}

// retryable reports whether a broker error may go away by itself (no
// controller yet, a broker not ready) rather than being a refusal.
func retryable(err error) bool {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		// INVALID_REPLICATION_FACTOR: the RF is capped at the brokers
		// Metadata lists, so it means some are still fenced (just started).
		return ke.Retriable || ke == kerr.NotController || ke == kerr.InvalidReplicationFactor
	}
	// Transport errors (a broker still starting) are worth a retry too.
	return true
}

// sleep waits d on clk or until ctx is done.
func sleep(ctx context.Context, clk clock.Clock, d time.Duration) error {
	t := clk.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C():
		return nil
	}
}
