package config

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// InvalidValueError says which key holds a value Kafka would refuse, and why.
type InvalidValueError struct {
	Key    string
	Value  string // "[hidden]" for sensitive keys
	Reason string
}

func (e *InvalidValueError) Error() string {
	return fmt.Sprintf("invalid value %q for configuration %s: %s", e.Value, e.Key, e.Reason)
}

func invalid(def KeyDef, raw, reason string) error {
	shown := raw
	if def.Sensitive() {
		shown = "[hidden]"
	}
	return &InvalidValueError{Key: def.Name, Value: shown, Reason: reason}
}

// splitList splits a LIST value the way Kafka's ConfigDef does: trimmed, empty means no
// elements, elements separated by commas with surrounding whitespace dropped.
func splitList(raw string) []string {
	s := strings.TrimSpace(raw)
	if s == "" {
		return []string{}
	}
	parts := strings.Split(s, ",")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
	}
	return parts
}

// parseBool accepts what Kafka accepts: true or false in any letter case.
func parseBool(raw string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(raw)) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// validateValue checks raw against def's type and validator constraints, as Kafka's
// ConfigDef.parse does when a broker starts or an AlterConfigs/CreateTopics arrives.
func validateValue(def KeyDef, raw string) error {
	trimmed := strings.TrimSpace(raw)
	switch def.Type {
	case TypeBoolean:
		if _, ok := parseBool(raw); !ok {
			return invalid(def, raw, "expected value to be either true or false")
		}
	case TypeInt, TypeShort, TypeLong:
		bits := 64
		switch def.Type {
		case TypeInt:
			bits = 32
		case TypeShort:
			bits = 16
		}
		if _, err := strconv.ParseInt(trimmed, 10, bits); err != nil {
			return invalid(def, raw, fmt.Sprintf("not a number of type %s", def.Type))
		}
	case TypeDouble:
		f, err := strconv.ParseFloat(strings.TrimRight(trimmed, "dDfF"), 64)
		if err != nil || (math.IsNaN(f) && !strings.EqualFold(trimmed, "NaN")) {
			return invalid(def, raw, "not a number of type double")
		}
	case TypeClass:
		if trimmed == "" {
			return invalid(def, raw, "expected a class name")
		}
	case TypeString, TypeList, TypePassword:
	}
	for _, c := range def.Checks {
		if err := applyCheck(def, raw, c); err != nil {
			return err
		}
	}
	return nil
}

func applyCheck(def KeyDef, raw string, c Check) error {
	trimmed := strings.TrimSpace(raw)
	switch c.Kind {
	case CheckRange:
		return checkRange(def, raw, c)
	case CheckOneOf:
		if !slices.Contains(c.Allowed, trimmed) {
			return invalid(def, raw, "string must be one of: "+strings.Join(c.Allowed, ", "))
		}
	case CheckOneOfFold:
		if !slices.ContainsFunc(c.Allowed, func(a string) bool { return strings.EqualFold(a, trimmed) }) {
			return invalid(def, raw, "string must be one of (any case): "+strings.Join(c.Allowed, ", "))
		}
	case CheckList:
		return checkList(def, raw, c)
	case CheckListMaxSize:
		if limit, err := strconv.Atoi(c.Max); err == nil && len(splitList(raw)) > limit {
			return invalid(def, raw, "list may hold at most "+c.Max+" elements")
		}
	case CheckNonEmpty:
		if trimmed == "" {
			return invalid(def, raw, "string must be non-empty")
		}
	case CheckNonEmptyNoControlChars:
		if trimmed == "" {
			return invalid(def, raw, "string must be non-empty")
		}
		if strings.IndexFunc(raw, unicode.IsControl) >= 0 {
			return invalid(def, raw, "string must not contain control characters")
		}
	case CheckKafkaOnly:
		return kafkaOnlyCheck(def, raw, c.Text)
	case CheckNonNull:
		// A properties value is never null.
	}
	return nil
}

// kafkaOnlyCheck reproduces the custom Kafka validators Sluice knows by their description.
// Others only get the type check here: the quorum voter and bootstrap lists ("non-empty list",
// though Kafka accepts them empty) are parsed in kraft.go; docs/configuration.md lists them.
func kafkaOnlyCheck(def KeyDef, raw, text string) error {
	switch text {
	case "[1,...,9] or -1":
		n, err := strconv.Atoi(strings.TrimSpace(raw))
		if err != nil || (n != -1 && (n < 1 || n > 9)) {
			return invalid(def, raw, "value must be -1 or between 1 and 9")
		}
	case "[partitionId]:[brokerId],[partitionId]:[brokerId],...":
		return checkThrottledReplicas(def, raw)
	}
	return nil
}

// checkThrottledReplicas accepts "*" or partition:broker pairs, as Kafka's throttled
// replica list validator does.
func checkThrottledReplicas(def KeyDef, raw string) error {
	list := splitList(raw)
	if len(list) == 1 && list[0] == "*" {
		return nil
	}
	for _, e := range list {
		p, b, ok := strings.Cut(e, ":")
		if !ok {
			return invalid(def, raw, "entries must be partitionId:brokerId or the single value *")
		}
		if _, err := strconv.ParseInt(strings.TrimSpace(p), 10, 32); err != nil {
			return invalid(def, raw, "partition id "+p+" is not a number")
		}
		if _, err := strconv.ParseInt(strings.TrimSpace(b), 10, 32); err != nil {
			return invalid(def, raw, "broker id "+b+" is not a number")
		}
	}
	return nil
}

func checkList(def KeyDef, raw string, c Check) error {
	list := splitList(raw)
	if c.NotEmpty && len(list) == 0 {
		return invalid(def, raw, "list must not be empty")
	}
	for i, v := range list {
		if c.Unique && v == "" {
			return invalid(def, raw, "list elements must not be empty")
		}
		if c.Unique && slices.Contains(list[:i], v) {
			return invalid(def, raw, "list elements must not be duplicated")
		}
		if len(c.Allowed) > 0 && !slices.Contains(c.Allowed, v) {
			return invalid(def, raw, "each element must be one of: "+strings.Join(c.Allowed, ", "))
		}
	}
	return nil
}

func checkRange(def KeyDef, raw string, c Check) error {
	trimmed := strings.TrimSpace(raw)
	if def.Type == TypeDouble {
		v, err := strconv.ParseFloat(strings.TrimRight(trimmed, "dDfF"), 64)
		if err != nil {
			return invalid(def, raw, "not a number of type double")
		}
		if c.Min != "" {
			if lo, err := strconv.ParseFloat(c.Min, 64); err == nil && v < lo {
				return invalid(def, raw, "value must be at least "+c.Min)
			}
		}
		if c.Max != "" {
			if hi, err := strconv.ParseFloat(c.Max, 64); err == nil && v > hi {
				return invalid(def, raw, "value must be no more than "+c.Max)
			}
		}
		return nil
	}
	v, err := strconv.ParseInt(trimmed, 10, 64)
	if err != nil {
		return invalid(def, raw, fmt.Sprintf("not a number of type %s", def.Type))
	}
	if c.Min != "" {
		if lo, err := strconv.ParseInt(c.Min, 10, 64); err == nil && v < lo {
			return invalid(def, raw, "value must be at least "+c.Min)
		}
	}
	if c.Max != "" {
		if hi, err := strconv.ParseInt(c.Max, 10, 64); err == nil && v > hi {
			return invalid(def, raw, "value must be no more than "+c.Max)
		}
	}
	return nil
}
