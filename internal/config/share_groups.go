package config

// Share group settings (KIP-932): the group.share.* keys the group
// coordinator acts on, read with Kafka 4.4's start-up checks
// (GroupCoordinatorConfig.verifyShareGroupConfigs). The keys themselves
// are Kafka's generated definitions (keys_gen.go); this is the reader the
// node hands to the group coordinator.

import (
	"fmt"
	"strings"
	"time"
)

// ShareGroupSettings are the share group keys the group coordinator uses.
type ShareGroupSettings struct {
	SessionTimeout          time.Duration // group.share.session.timeout.ms
	HeartbeatInterval       time.Duration // group.share.heartbeat.interval.ms
	MaxSize                 int           // group.share.max.size
	InitializeRetryInterval time.Duration // group.share.initialize.retry.interval.ms
	AssignmentInterval      time.Duration // group.share.assignment.interval.ms
}

// ShareGroups reads the share group keys, failing as Kafka fails to start
// on bounds that contradict each other or an assignor other than Kafka's
// one built-in "simple".
func (c *Config) ShareGroups() (ShareGroupSettings, error) {
	session, minSession, maxSession := c.Int(GroupShareSessionTimeoutMs), c.Int(GroupShareMinSessionTimeoutMs), c.Int(GroupShareMaxSessionTimeoutMs)
	hb, minHB, maxHB := c.Int(GroupShareHeartbeatIntervalMs), c.Int(GroupShareMinHeartbeatIntervalMs), c.Int(GroupShareMaxHeartbeatIntervalMs)
	ai, minAI, maxAI := c.Int(GroupShareAssignmentIntervalMs), c.Int(GroupShareMinAssignmentIntervalMs), c.Int(GroupShareMaxAssignmentIntervalMs)
	checks := []struct {
		ok   bool
		a, b string
		rel  string
	}{
		{maxHB >= minHB, "group.share.max.heartbeat.interval.ms", "group.share.min.heartbeat.interval.ms", "greater than or equal to"},
		{hb >= minHB, "group.share.heartbeat.interval.ms", "group.share.min.heartbeat.interval.ms", "greater than or equal to"},
		{hb <= maxHB, "group.share.heartbeat.interval.ms", "group.share.max.heartbeat.interval.ms", "less than or equal to"},
		{maxSession >= minSession, "group.share.max.session.timeout.ms", "group.share.min.session.timeout.ms", "greater than or equal to"},
		{session >= minSession, "group.share.session.timeout.ms", "group.share.min.session.timeout.ms", "greater than or equal to"},
		{session <= maxSession, "group.share.session.timeout.ms", "group.share.max.session.timeout.ms", "less than or equal to"},
		{hb < session, "group.share.heartbeat.interval.ms", "group.share.session.timeout.ms", "less than"},
	}
	assignors := c.List(GroupShareAssignors)
	if len(assignors) != 1 {
		return ShareGroupSettings{}, fmt.Errorf("requirement failed: group.share.assignors must contain exactly one assignor, but found %d", len(assignors))
	}
	checks = append(checks, []struct {
		ok   bool
		a, b string
		rel  string
	}{
		{maxAI >= minAI, "group.share.max.assignment.interval.ms", "group.share.min.assignment.interval.ms", "greater than or equal to"},
		{ai >= minAI, "group.share.assignment.interval.ms", "group.share.min.assignment.interval.ms", "greater than or equal to"},
		{ai <= maxAI, "group.share.assignment.interval.ms", "group.share.max.assignment.interval.ms", "less than or equal to"},
	}...)
	for _, ch := range checks {
		if !ch.ok {
			return ShareGroupSettings{}, fmt.Errorf("requirement failed: %s must be %s %s", ch.a, ch.rel, ch.b)
		}
	}
	switch a := strings.TrimSpace(assignors[0]); a {
	case "simple", "org.apache.kafka.coordinator.group.assignor.SimpleAssignor":
	default:
		return ShareGroupSettings{}, fmt.Errorf("group.share.assignors: %q: only Kafka's built-in simple assignor is supported", a)
	}
	ms := func(v int32) time.Duration { return time.Duration(v) * time.Millisecond }
	return ShareGroupSettings{
		SessionTimeout: ms(session), HeartbeatInterval: ms(hb), MaxSize: int(c.Int(GroupShareMaxSize)),
		InitializeRetryInterval: ms(c.Int(GroupShareInitializeRetryIntervalMs)), AssignmentInterval: ms(ai),
	}, nil
}
