package config

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
)

// InvalidGroupConfigError is a refused group config set, INVALID_CONFIG
// with Kafka's message.
type InvalidGroupConfigError struct{ Msg string }

func (e *InvalidGroupConfigError) Error() string { return e.Msg }

// Unwrap gives the response's error code.
func (e *InvalidGroupConfigError) Unwrap() error { return kerr.InvalidConfig }

func groupErr(format string, args ...any) error {
	return &InvalidGroupConfigError{Msg: fmt.Sprintf(format, args...)}
}

// groupBound is a group key bounded by broker keys ("" for no bound).
type groupBound struct{ key, min, max string }

// groupBounds is GroupConfig.validateValues' order (the first failing
// check names the error).
var groupBounds = []groupBound{
	{GroupCfgConsumerHeartbeatIntervalMs, "group.consumer.min.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms"},
	{GroupCfgConsumerSessionTimeoutMs, "group.consumer.min.session.timeout.ms", "group.consumer.max.session.timeout.ms"},
	{GroupCfgConsumerAssignmentIntervalMs, "group.consumer.min.assignment.interval.ms", "group.consumer.max.assignment.interval.ms"},
	{GroupCfgShareHeartbeatIntervalMs, "group.share.min.heartbeat.interval.ms", "group.share.max.heartbeat.interval.ms"},
	{GroupCfgShareSessionTimeoutMs, "group.share.min.session.timeout.ms", "group.share.max.session.timeout.ms"},
	{GroupCfgShareRecordLockDurationMs, "group.share.min.record.lock.duration.ms", "group.share.max.record.lock.duration.ms"},
	{GroupCfgShareDeliveryCountLimit, "group.share.min.delivery.count.limit", "group.share.max.delivery.count.limit"},
	{GroupCfgSharePartitionMaxRecordLocks, "group.share.min.partition.max.record.locks", "group.share.max.partition.max.record.locks"},
	{GroupCfgShareAssignmentIntervalMs, "group.share.min.assignment.interval.ms", "group.share.max.assignment.interval.ms"},
	{"streams.heartbeat.interval.ms", "group.streams.min.heartbeat.interval.ms", "group.streams.max.heartbeat.interval.ms"},
	{"streams.session.timeout.ms", "group.streams.min.session.timeout.ms", "group.streams.max.session.timeout.ms"},
	{"streams.num.standby.replicas", "", "group.streams.max.standby.replicas"},
	{"streams.assignment.interval.ms", "group.streams.min.assignment.interval.ms", "group.streams.max.assignment.interval.ms"},
	{"streams.task.offset.interval.ms", "group.streams.min.task.offset.interval.ms", ""},
	{"streams.num.warmup.replicas", "", "group.streams.max.warmup.replicas"},
}

// sessionPairs are the session timeouts that must exceed their heartbeat
// intervals, with the broker keys used for the one the group does not set.
var sessionPairs = [][4]string{
	{GroupCfgConsumerSessionTimeoutMs, "group.consumer.session.timeout.ms", GroupCfgConsumerHeartbeatIntervalMs, "group.consumer.heartbeat.interval.ms"},
	{GroupCfgShareSessionTimeoutMs, "group.share.session.timeout.ms", GroupCfgShareHeartbeatIntervalMs, "group.share.heartbeat.interval.ms"},
	{"streams.session.timeout.ms", "group.streams.session.timeout.ms", "streams.heartbeat.interval.ms", "group.streams.heartbeat.interval.ms"},
}

// ValidateGroupConfigs checks a group's whole set of overrides as Kafka
// 4.4's GroupConfig.validate: known names, no duplicate rack tags, each
// value parsed and within ConfigDef's range (definition order), then the
// broker's min/max keys, a registered streams assignor, session timeouts
// above heartbeat intervals and a DLQ topic outside the "__" names.
func (c *Config) ValidateGroupConfigs(configs map[string]string) error {
	for _, name := range slices.Sorted(mapsKeys(configs)) {
		if !IsGroupKey(name) {
			return groupErr("Unknown group config name: %s", name)
		}
	}
	if v, ok := configs[GroupCfgStreamsRackAwareAssignmentTags]; ok {
		tags := parseGroupList(v)
		seen := map[string]bool{}
		for _, t := range tags {
			if seen[t] {
				return groupErr("%s must not contain duplicate tag keys.", GroupCfgStreamsRackAwareAssignmentTags)
			}
			seen[t] = true
		}
	}
	parsed := map[string]string{}
	for _, k := range groupKeys {
		raw, ok := configs[k.Name]
		if !ok {
			continue
		}
		v, err := parseGroupValue(k, raw)
		if err != nil {
			return err
		}
		parsed[k.Name] = v
	}
	return c.validateGroupValues(parsed)
}

func (c *Config) validateGroupValues(parsed map[string]string) error {
	for _, b := range groupBounds {
		s, ok := parsed[b.key]
		if !ok {
			continue
		}
		v, _ := strconv.ParseInt(s, 10, 32)
		lo, hi := c.groupBoundValues(b)
		switch {
		case b.min != "" && b.max != "" && (v < lo || v > hi):
			return groupErr("%s must be in the range %d to %d inclusive.", b.key, lo, hi)
		case b.min == "" && v > hi:
			return groupErr("%s must be less than or equal to %d", b.key, hi)
		case b.max == "" && v < lo:
			return groupErr("%s must be greater than or equal to %d", b.key, lo)
		}
	}
	if name, ok := parsed[GroupCfgStreamsAssignorName]; ok {
		names := c.streamsAssignorNames()
		if !slices.Contains(names, name) {
			return groupErr("%s '%s' is not a registered task assignor. Registered assignors are: [%s].", GroupCfgStreamsAssignorName, name, strings.Join(names, ", "))
		}
	}
	for _, p := range sessionPairs {
		session, sok := parsed[p[0]]
		hb, hok := parsed[p[2]]
		if !sok && !hok {
			continue
		}
		s, h := c.brokerIntOr(session, sok, p[1]), c.brokerIntOr(hb, hok, p[3])
		if s <= h {
			return groupErr("%s must be greater than %s", p[0], p[2])
		}
	}
	if t := parsed[GroupCfgErrorsDLQTopicName]; strings.HasPrefix(t, "__") {
		return groupErr("%s: DLQ topic name must not start with '__'", GroupCfgErrorsDLQTopicName)
	}
	return nil
}

// groupBoundValues reads a bound's broker keys.
func (c *Config) groupBoundValues(b groupBound) (lo, hi int64) {
	if b.min != "" {
		lo = int64(c.Int(IntKey{b.min}))
	}
	if b.max != "" {
		hi = int64(c.Int(IntKey{b.max}))
	}
	return lo, hi
}

func (c *Config) brokerIntOr(v string, ok bool, brokerKey string) int64 {
	if ok {
		n, _ := strconv.ParseInt(v, 10, 32)
		return n
	}
	return int64(c.Int(IntKey{brokerKey}))
}

// streamsAssignorNames are the names of group.streams.assignors' assignors
// (Kafka's one built-in is "sticky", named also by its class).
func (c *Config) streamsAssignorNames() []string {
	var out []string
	for _, a := range c.List(GroupStreamsAssignors) {
		if a == "org.apache.kafka.coordinator.group.streams.assignor.StickyTaskAssignor" {
			a = "sticky"
		}
		out = append(out, a)
	}
	return out
}

// parseGroupValue parses raw as ConfigDef parses the key's type and checks
// its validator, returning the value as Kafka renders it (convertToString)
// or ConfigException's message.
func parseGroupValue(k GroupKeyDef, raw string) (string, error) {
	invalid := func(v, msg string) error {
		return groupErr("Invalid value %s for configuration %s: %s", v, k.Name, msg)
	}
	s := strings.TrimSpace(raw)
	switch k.Type {
	case TypeInt, TypeLong:
		bits, kind := 32, "INT"
		if k.Type == TypeLong {
			bits, kind = 64, "LONG"
		}
		n, err := strconv.ParseInt(s, 10, bits)
		if err != nil {
			return "", invalid(raw, "Not a number of type "+kind)
		}
		if k.HasMin && n < k.Min {
			return "", invalid(strconv.FormatInt(n, 10), "Value must be at least "+strconv.FormatInt(k.Min, 10))
		}
		return strconv.FormatInt(n, 10), nil
	case TypeBoolean:
		switch strings.ToLower(s) {
		case "true", "false":
			return strings.ToLower(s), nil
		}
		return "", invalid(raw, "Expected value to be either true or false")
	case TypeList:
		return strings.Join(parseGroupList(s), ","), nil
	}
	switch k.Name {
	case GroupCfgShareAutoOffsetReset:
		if _, err := ParseShareAutoOffsetReset(s); err != nil {
			return "", invalid(s, err.Error())
		}
	case GroupCfgShareIsolationLevel:
		if s != "read_committed" && s != "read_uncommitted" {
			return "", invalid(s, "String must be one of: read_committed, read_uncommitted")
		}
	}
	return s, nil
}

// parseGroupList is ConfigDef's LIST parsing: comma separated, trimmed,
// the empty string an empty list.
func parseGroupList(v string) []string {
	if strings.TrimSpace(v) == "" {
		return nil
	}
	parts := strings.Split(v, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

func mapsKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// javaDuration is java.time.Duration.parse's grammar (ISO-8601 PnDTnHnMn.nS,
// case-insensitive, signs per part).
var javaDuration = regexp.MustCompile(`(?i)^([-+]?)P(?:([-+]?[0-9]+)D)?(T(?:([-+]?[0-9]+)H)?(?:([-+]?[0-9]+)M)?(?:([-+]?[0-9]+)(?:[.,]([0-9]{0,9}))?S)?)?$`)
