package config

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
)

// GroupSettings is one group's effective configuration: the group's
// dynamic configs (as stored in the metadata log) over the broker keys
// they are synonyms of, over the group keys' own defaults. Integer values
// are brought within the broker's current min/max keys, as Kafka 4.4's
// GroupConfig.evaluate does for an override stored before the bounds
// changed. The group coordinator and the share partition manager read it.
type GroupSettings struct {
	broker    *Config
	overrides map[string]string
}

// GroupSettings returns the settings of a group with the given dynamic
// configs (metadata.Image.GroupConfigs); c is the broker's effective
// configuration (static keys with the dynamic broker layers on top).
func (c *Config) GroupSettings(overrides map[string]string) GroupSettings {
	return GroupSettings{broker: c, overrides: overrides}
}

// Value is the key's effective value, rendered as Kafka renders it, and
// whether the group overrides it. An unknown key is "", false.
func (g GroupSettings) Value(name string) (value string, overridden bool) {
	k, ok := groupKey(name)
	if !ok {
		return "", false
	}
	if raw, ok := g.overrides[name]; ok {
		if v, err := parseGroupValue(k, raw); err == nil {
			return g.clamp(k, v), true
		}
		// The controller validated it; a value this build refuses falls
		// back to the broker's, as a record from a newer build would.
	}
	return g.brokerValue(k), false
}

// brokerValue is the value of the key's broker synonym, else its default.
func (g GroupSettings) brokerValue(k GroupKeyDef) string {
	if k.Synonym == "" {
		return k.Default
	}
	if k.Name == GroupCfgStreamsAssignorName {
		if names := g.broker.streamsAssignorNames(); len(names) > 0 {
			return names[0]
		}
		return ""
	}
	v, ok := g.broker.resolved(k.Synonym)
	if !ok {
		return k.Default
	}
	if k.Type == TypeList {
		return strings.Join(parseGroupList(v), ",")
	}
	return strings.TrimSpace(v)
}

// clamp brings an integer override within the broker's bounds.
func (g GroupSettings) clamp(k GroupKeyDef, v string) string {
	for _, b := range groupBounds {
		if b.key != k.Name {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return v
		}
		lo, hi := g.broker.groupBoundValues(b)
		if b.min != "" && n < lo {
			n = lo
		}
		if b.max != "" && n > hi {
			n = hi
		}
		return strconv.FormatInt(n, 10)
	}
	return v
}

func (g GroupSettings) int(name string) int64 {
	v, _ := g.Value(name)
	n, _ := strconv.ParseInt(v, 10, 64)
	return n
}

func (g GroupSettings) ms(name string) time.Duration {
	return time.Duration(g.int(name)) * time.Millisecond
}

// ConsumerSessionTimeout is consumer.session.timeout.ms.
func (g GroupSettings) ConsumerSessionTimeout() time.Duration {
	return g.ms(GroupCfgConsumerSessionTimeoutMs)
}

// ConsumerHeartbeatInterval is consumer.heartbeat.interval.ms.
func (g GroupSettings) ConsumerHeartbeatInterval() time.Duration {
	return g.ms(GroupCfgConsumerHeartbeatIntervalMs)
}

// ShareSessionTimeout is share.session.timeout.ms.
func (g GroupSettings) ShareSessionTimeout() time.Duration {
	return g.ms(GroupCfgShareSessionTimeoutMs)
}

// ShareHeartbeatInterval is share.heartbeat.interval.ms.
func (g GroupSettings) ShareHeartbeatInterval() time.Duration {
	return g.ms(GroupCfgShareHeartbeatIntervalMs)
}

// ShareRecordLockDuration is share.record.lock.duration.ms.
func (g GroupSettings) ShareRecordLockDuration() time.Duration {
	return g.ms(GroupCfgShareRecordLockDurationMs)
}

// ShareDeliveryCountLimit is share.delivery.count.limit.
func (g GroupSettings) ShareDeliveryCountLimit() int {
	return int(g.int(GroupCfgShareDeliveryCountLimit))
}

// SharePartitionMaxRecordLocks is share.partition.max.record.locks.
func (g GroupSettings) SharePartitionMaxRecordLocks() int {
	return int(g.int(GroupCfgSharePartitionMaxRecordLocks))
}

// ShareReadCommitted reports share.isolation.level=read_committed.
func (g GroupSettings) ShareReadCommitted() bool {
	v, _ := g.Value(GroupCfgShareIsolationLevel)
	return v == "read_committed"
}

// ShareRenewAcknowledgeEnable is share.renew.acknowledge.enable.
func (g GroupSettings) ShareRenewAcknowledgeEnable() bool {
	v, _ := g.Value(GroupCfgShareRenewAcknowledgeEnable)
	return v == "true"
}

// ShareAutoOffsetReset is share.auto.offset.reset.
func (g GroupSettings) ShareAutoOffsetReset() ShareAutoOffsetReset {
	v, _ := g.Value(GroupCfgShareAutoOffsetReset)
	r, err := ParseShareAutoOffsetReset(v)
	if err != nil {
		return ShareAutoOffsetReset{Strategy: ResetLatest}
	}
	return r
}

// ResetStrategy is a share.auto.offset.reset strategy.
type ResetStrategy int8

// The strategies of Kafka's ShareGroupAutoOffsetResetStrategy.
const (
	ResetLatest ResetStrategy = iota
	ResetEarliest
	ResetByDuration
)

// ShareAutoOffsetReset is a parsed share.auto.offset.reset: where a share
// partition without state starts (its SPSO).
type ShareAutoOffsetReset struct {
	Strategy ResetStrategy
	// Duration is by_duration's look-back: the start is the first offset
	// whose timestamp is at or after now - Duration. Durations beyond Go's
	// range are capped at its maximum.
	Duration time.Duration
}

// ParseShareAutoOffsetReset parses latest, earliest or
// by_duration:<ISO-8601 duration> (not negative), case as Kafka: exact.
// The error is Kafka's validator message.
func ParseShareAutoOffsetReset(v string) (ShareAutoOffsetReset, error) {
	switch v {
	case "latest":
		return ShareAutoOffsetReset{Strategy: ResetLatest}, nil
	case "earliest":
		return ShareAutoOffsetReset{Strategy: ResetEarliest}, nil
	}
	if rest, ok := strings.CutPrefix(v, "by_duration:"); ok {
		if d, err := parseJavaDuration(rest); err == nil {
			return ShareAutoOffsetReset{Strategy: ResetByDuration, Duration: d}, nil
		}
	}
	return ShareAutoOffsetReset{}, errors.New("Invalid value `" + v + "` for configuration share.auto.offset.reset. " +
		"The value must be either 'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'.")
}

// parseJavaDuration is java.time.Duration.parse, refusing negative results.
func parseJavaDuration(s string) (time.Duration, error) {
	m := javaDuration.FindStringSubmatch(s)
	if m == nil || (m[2] == "" && m[3] == "") || strings.EqualFold(m[3], "T") {
		return 0, errors.New("not an ISO-8601 duration")
	}
	var secs float64
	for i, unit := range map[int]float64{2: 86400, 4: 3600, 5: 60, 6: 1} {
		if m[i] == "" {
			continue
		}
		n, err := strconv.ParseFloat(m[i], 64)
		if err != nil {
			return 0, err
		}
		secs += n * unit
	}
	if m[7] != "" {
		frac, _ := strconv.ParseFloat("0."+m[7], 64)
		if strings.HasPrefix(m[6], "-") {
			frac = -frac
		}
		secs += frac
	}
	if m[1] == "-" {
		secs = -secs
	}
	if secs < 0 {
		return 0, errors.New("negative duration")
	}
	if secs >= float64(math.MaxInt64)/float64(time.Second) {
		return time.Duration(math.MaxInt64), nil
	}
	return time.Duration(secs * float64(time.Second)), nil
}
