package web

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// Bounds on form input, so a post cannot ask for an absurd amount of work.
const (
	maxTopicNameLen = 249 // Kafka's limit
	maxPartitions   = 100000
	maxConfigLines  = 200
	maxConfigLine   = 4096
)

// topicSpec is a create-topic form.
type topicSpec struct {
	name        string
	partitions  int32 // -1: the broker's num.partitions
	replication int16 // -1: the broker's default.replication.factor
	configs     map[string]*string
}

// parseTopicForm reads the create-topic form. Kafka validates the name's
// characters and the configs itself; its messages are shown verbatim.
func parseTopicForm(f url.Values) (topicSpec, error) {
	s := topicSpec{name: strings.TrimSpace(f.Get("name"))}
	if s.name == "" {
		return s, badRequest("A topic needs a name.")
	}
	if len(s.name) > maxTopicNameLen {
		return s, badRequest("A topic name is at most %d characters; this one has %d.", maxTopicNameLen, len(s.name))
	}
	p, err := optionalInt(f.Get("partitions"), "Partitions", 1, maxPartitions)
	if err != nil {
		return s, err
	}
	rf, err := optionalInt(f.Get("replication_factor"), "Replication factor", 1, 32767)
	if err != nil {
		return s, err
	}
	s.partitions, s.replication = int32(p), int16(rf)
	s.configs, err = parseConfigLines(f.Get("configs"))
	return s, err
}

// optionalInt parses a number within [lo, hi]; blank is -1 (the default).
func optionalInt(v, what string, lo, hi int64) (int64, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return -1, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, badRequest("%s must be a whole number from %d to %d (or blank for the broker's default), not %q.", what, lo, hi, clipInput(v))
	}
	return n, nil
}

// parseConfigLines reads "key=value" lines (blank lines and lines starting
// with # are skipped).
func parseConfigLines(text string) (map[string]*string, error) {
	out := make(map[string]*string)
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	if len(lines) > maxConfigLines {
		return nil, badRequest("At most %d config lines, not %d.", maxConfigLines, len(lines))
	}
	for i, line := range lines {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if len(line) > maxConfigLine {
			return nil, badRequest("Config line %d is longer than %d characters.", i+1, maxConfigLine)
		}
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, badRequest("Config line %d is not key=value: %q.", i+1, clipInput(line))
		}
		if _, dup := out[k]; dup {
			return nil, badRequest("Config %q is given twice.", k)
		}
		v = strings.TrimSpace(v)
		out[k] = &v
	}
	return out, nil
}

// parseDeleteKeys reads config names to reset, one per line or
// comma-separated.
func parseDeleteKeys(text string) ([]string, error) {
	var out []string
	for _, k := range strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == '\n' || r == '\r' }) {
		if k = strings.TrimSpace(k); k == "" {
			continue
		}
		if len(out) >= maxConfigLines || len(k) > maxConfigLine {
			return nil, badRequest("Too many or too long config names to reset.")
		}
		out = append(out, k)
	}
	return out, nil
}

// parseBrokerID reads a broker id from a path.
func parseBrokerID(v string) (int32, error) {
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil || n < 0 {
		return 0, userError(404, "%q is not a broker id.", clipInput(v))
	}
	return int32(n), nil
}

// clipInput shortens user input echoed in a message.
func clipInput(s string) string {
	const limit = 80
	if len(s) <= limit {
		return s
	}
	return fmt.Sprintf("%s... (%d bytes)", strings.ToValidUTF8(s[:limit], "?"), len(s))
}
