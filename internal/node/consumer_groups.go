package node

import (
	"fmt"
	"strings"
	"time"

	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/coordinator/group"
	"github.com/sluice-io/sluice/internal/coordinator/group/assignor"
)

// consumerGroupConfig reads the group.consumer.* keys (KIP-848) into cfg,
// with Kafka's start-up checks of the bounds (GroupCoordinatorConfig).
func consumerGroupConfig(c *config.Config, cfg *group.Config) error {
	session := c.Int(config.GroupConsumerSessionTimeoutMs)
	minSession, maxSession := c.Int(config.GroupConsumerMinSessionTimeoutMs), c.Int(config.GroupConsumerMaxSessionTimeoutMs)
	hb := c.Int(config.GroupConsumerHeartbeatIntervalMs)
	minHB, maxHB := c.Int(config.GroupConsumerMinHeartbeatIntervalMs), c.Int(config.GroupConsumerMaxHeartbeatIntervalMs)
	checks := []struct {
		ok  bool
		msg string
	}{
		{maxHB >= minHB, "group.consumer.max.heartbeat.interval.ms must be greater than or equal to group.consumer.min.heartbeat.interval.ms"},
		{hb >= minHB, "group.consumer.heartbeat.interval.ms must be greater than or equal to group.consumer.min.heartbeat.interval.ms"},
		{hb <= maxHB, "group.consumer.heartbeat.interval.ms must be less than or equal to group.consumer.max.heartbeat.interval.ms"},
		{maxSession >= minSession, "group.consumer.max.session.timeout.ms must be greater than or equal to group.consumer.min.session.timeout.ms"},
		{session >= minSession, "group.consumer.session.timeout.ms must be greater than or equal to group.consumer.min.session.timeout.ms"},
		{session <= maxSession, "group.consumer.session.timeout.ms must be less than or equal to group.consumer.max.session.timeout.ms"},
		{hb < session, "group.consumer.heartbeat.interval.ms must be less than group.consumer.session.timeout.ms"},
	}
	for _, ch := range checks {
		if !ch.ok {
			return fmt.Errorf("requirement failed: %s", ch.msg)
		}
	}
	cfg.ConsumerSessionTimeout = millis(int64(session))
	cfg.ConsumerHeartbeatInterval = millis(int64(hb))
	// A group's consumer.* overrides (the GROUP config resource), within
	// the bounds above, as Kafka's GroupConfig.evaluate.
	cfg.ResolveConsumerTimeouts = func(groupConfigs map[string]string) (time.Duration, time.Duration) {
		s := c.GroupSettings(groupConfigs)
		return s.ConsumerSessionTimeout(), s.ConsumerHeartbeatInterval()
	}
	cfg.ConsumerMaxSize = int(c.Int(config.GroupConsumerMaxSize))
	cfg.ConsumerAssignors = nil
	for _, name := range c.List(config.GroupConsumerAssignors) {
		a, err := assignorByConfigName(name)
		if err != nil {
			return err
		}
		cfg.ConsumerAssignors = append(cfg.ConsumerAssignors, a)
	}
	if len(cfg.ConsumerAssignors) == 0 {
		return fmt.Errorf("group.consumer.assignors: no assignor")
	}
	policy := strings.ToLower(c.String(config.GroupConsumerMigrationPolicy))
	switch policy {
	case "disabled", "upgrade", "downgrade", "bidirectional":
		cfg.ConsumerMigrationPolicy = policy
	default:
		return fmt.Errorf("group.consumer.migration.policy: %q is not one of disabled, upgrade, downgrade, bidirectional", policy)
	}
	return nil
}

// assignorByConfigName accepts Kafka's short names and its class names of
// the two built-in assignors.
func assignorByConfigName(name string) (assignor.Assignor, error) {
	short := strings.TrimSpace(name)
	switch short {
	case "org.apache.kafka.coordinator.group.assignor.UniformAssignor":
		short = assignor.UniformName
	case "org.apache.kafka.coordinator.group.assignor.RangeAssignor":
		short = assignor.RangeName
	}
	if a, ok := assignor.ByName(short); ok {
		return a, nil
	}
	return nil, fmt.Errorf("group.consumer.assignors: %q is not a server-side assignor Sluice has (uniform, range)", name)
}
